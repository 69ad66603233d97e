package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"

	"github.com/go-sql-driver/mysql"
	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/sqlexport"
	"github.com/dbtrail/dbtrail/internal/verify"
)

// verifyExitInconclusive is the exit status of `dbtrail verify` when no table
// mismatched and none failed but at least one was inconclusive.
const verifyExitInconclusive = 3

// verifyExit ends the process with a status; tests replace it.
var verifyExit = os.Exit

// newVerifyCmd is `dbtrail verify`: compare live tables of the source with a
// snapshot by fingerprint (see internal/verify).
func newVerifyCmd(g *globals) *cobra.Command {
	var backupDir, source, snapID, at, archiveURL string
	var tables []string
	var opts verify.Options
	src := dsnFlag{name: "source-dsn"}
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Compare live tables with a snapshot by fingerprint: match, mismatch or inconclusive",
		Long: `Compare each table of a snapshot with the live table on the source: a row
count and an order-independent sum of per-row hashes over canonical values,
computed on the source inside START TRANSACTION WITH CONSISTENT SNAPSHOT and
over the table as the snapshot holds it (its table file, with the chain of
changes of later refreshes applied). Prints one line per table:

  match         the fingerprints are equal
  MISMATCH      they differ at the snapshot's binlog position (or the server
                writes no binlog, e.g. a server a .sql export was loaded into)
  inconclusive  they differ, but the source's binlog moved on since the
                snapshot (or the position is unknown): the table may just have
                changed since, and the index cannot bridge that window yet
  ERROR         the table could not be verified (e.g. a table file or chain
                file that fails its manifest digest)

--explain lists the differing keys (at most --max-keys) and holds one entry
per live row in memory while a table is compared. A key whose rows differ only
in FLOAT digits a dump did not carry (a table whose FLOAT values a full backup
could not make exact) is marked with that cause. A table with a chain is read
with DuckDB, which spills to a scratch folder made (and removed) under
--work-dir.

Exit status: 0 when every table matched; 1 when any table mismatched or
failed; 3 when none mismatched or failed but at least one was inconclusive.`,
		Example: "  DBTRAIL_SOURCE_DSN='dbtrail:secret@tcp(db1:3306)/' dbtrail verify --backup-dir /backups --source main\n" +
			"  dbtrail verify --backup-dir /backups --source-dsn 'dbtrail@tcp(db1:3306)/' --source-password-file pw --table shop.orders --explain",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var bad, inconclusive int
			if at != "" {
				dsn, err := src.resolve(g.fromArgs)
				if err != nil {
					return err
				}
				past, done, err := openPastRecorded(cmd, g, backupDir, source, archiveURL)
				if err != nil {
					return err
				}
				defer done()
				if bad, inconclusive, err = verifyAt(cmd.Context(), cmd.OutOrStdout(), past, at, tables, dsn, opts); err != nil {
					return err
				}
			} else {
				snap, err := openBackupSnapshot(backupDir, source, snapID)
				if err != nil {
					return err
				}
				sel, err := sqlexport.SelectTables(snap.Manifest, tables)
				if err != nil {
					return err
				}
				dsn, err := src.resolve(g.fromArgs)
				if err != nil {
					return err
				}
				if bad, inconclusive, err = runVerify(cmd.Context(), cmd.OutOrStdout(), dsn, snap, sel, opts); err != nil {
					return err
				}
			}
			if bad > 0 {
				return fmt.Errorf("verify: %d tables mismatched or could not be verified", bad)
			}
			if inconclusive > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "verify: %d tables inconclusive, none mismatched (exit status %d)\n", inconclusive, verifyExitInconclusive)
				verifyExit(verifyExitInconclusive)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&backupDir, "backup-dir", "", "backup folder holding <source>/snapshots and <source>/current")
	f.StringVar(&source, "source", "main", "source name")
	f.StringVar(&snapID, "snapshot", "current", "snapshot id (e.g. 20261129T061500Z) or current")
	f.StringArrayVar(&tables, "table", nil, "verify only this table, as schema.table (repeatable; default every table)")
	registerArchiveURL(f, &archiveURL, "with --at: the archive location, where hours older than the index window and snapshots on object storage are read (default: the location the index records for the archived hours)")
	f.StringVar(&at, "at", "", "verify against the tables rebuilt at moment T (time, seq:N, file:pos, GTID or latest) from the snapshots and the index (--index-dsn), e.g. a server a .sql export of T was loaded into")
	f.BoolVar(&opts.Explain, "explain", false, "list the keys whose rows differ")
	f.IntVar(&opts.MaxKeys, "max-keys", verify.DefaultMaxKeys, "most differing keys listed per table with --explain")
	f.StringVar(&opts.TempDir, "work-dir", "", "scratch folder for reading tables with a chain (default the system temp folder)")
	src.register(f, "source database")
	return cmd
}

// runVerify verifies each table and prints one line per table (and its
// differing keys) to out. It returns how many tables mismatched or failed
// and how many were inconclusive; err is for the connection only.
func runVerify(ctx context.Context, out io.Writer, dsn string, snap *snapshot.Snapshot, tables []snapshot.ManifestTable, opts verify.Options) (bad, inconclusive int, err error) {
	db, addr, err := openSource(ctx, dsn)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	fmt.Fprintf(out, "verifying %d tables of snapshot %s (binlog %s:%d) against %s\n", len(tables), snap.Manifest.SnapshotID,
		snap.Manifest.Position.File, snap.Manifest.Position.Pos, addr)
	for _, mt := range tables {
		res, err := verify.Table(ctx, db, snap, mt.Schema, mt.Table, opts)
		b, i := printVerdict(out, res, err)
		bad, inconclusive = bad+b, inconclusive+i
	}
	return bad, inconclusive, nil
}

// openSource connects to the live server of dsn for verify, values as the
// server prints them; addr is its address for messages.
func openSource(ctx context.Context, dsn string) (db *sql.DB, addr string, err error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, "", fmt.Errorf("source DSN %s: %w", index.RedactDSN(dsn), err)
	}
	cfg.ParseTime = false // values must arrive as the server prints them
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("source DSN %s: %w", index.RedactDSN(dsn), err)
	}
	db = sql.OpenDB(conn)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, "", fmt.Errorf("connect to source %s: %w", index.RedactDSN(dsn), err)
	}
	return db, cfg.Addr, nil
}

// printVerdict prints one table's verdict (and its differing keys); it
// returns 1, 0 for a mismatch or error, 0, 1 for an inconclusive one.
func printVerdict(out io.Writer, res verify.Result, err error) (bad, inconclusive int) {
	switch {
	case err != nil:
		fmt.Fprintf(out, "%-13s %s  %v\n", "ERROR", res.Table, err)
		return 1, 0
	case res.Verdict == verify.Match:
		fmt.Fprintf(out, "%-13s %s  %s\n", "match", res.Table, res.Reason)
	case res.Verdict == verify.Mismatch:
		bad = 1
		fmt.Fprintf(out, "%-13s %s  %s\n", "MISMATCH", res.Table, res.Reason)
	default:
		inconclusive = 1
		fmt.Fprintf(out, "%-13s %s  %s\n", "inconclusive", res.Table, res.Reason)
	}
	for _, d := range res.Diff {
		fmt.Fprintf(out, "    %s\n", d)
	}
	if res.DiffTotal > len(res.Diff) {
		fmt.Fprintf(out, "    … and %d more differing keys\n", res.DiffTotal-len(res.Diff))
	}
	return bad, inconclusive
}
