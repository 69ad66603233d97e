package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/sqlexport"
)

// newExportCmd is `dbtrail export`: write a snapshot in another format.
func newExportCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "export", Short: "Export a snapshot, a moment or a range of changes in another format"}
	cmd.AddCommand(newExportSQLCmd(g), newExportParquetCmd(g), newExportChangesCmd(g))
	return cmd
}

// newExportSQLCmd is `dbtrail export sql`: a .sql file regenerated from the
// rows of a published snapshot (see internal/sqlexport).
func newExportSQLCmd(g *globals) *cobra.Command {
	var backupDir, source, snapID, out string
	var tables []string
	var maxBytes int
	var workDir, at string
	var m momentFlags
	cmd := &cobra.Command{
		Use:   "sql",
		Short: "Write a .sql backup (CREATE TABLE + INSERT) of a snapshot, loadable with the mysql/mariadb client",
		Long: `Write a .sql file regenerated from the rows of a published snapshot: per schema
CREATE DATABASE IF NOT EXISTS and USE, per table DROP TABLE IF EXISTS, the stored
CREATE TABLE and multi-row INSERT statements, each at most --max-statement-bytes
long. Load it with:

  mariadb --defaults-extra-file=client.cnf -h HOST < FILE

Every table is exported as it is at the snapshot: its table file with the
chain of changes of later refreshes applied, read with DuckDB, which spills to
a scratch folder made (and removed) under --work-dir. A table file or chain
file that fails its manifest digest stops the export.
With --out FILE the file is written atomically (temporary file, fsync, rename);
a file is complete when its last line starts with "` + sqlexport.CompleteMarker + `".

With --at T the tables are exported as they were at moment T (a time, seq:N,
file:pos, GTID or latest; see dbtrail export parquet --help): the Export
workflow rebuilds each from the newest snapshot at or before T and the
index's changes up to T, on a worker that writes --out (a path on its
machine), and the file names the transaction the cut landed on.`,
		Example: "  dbtrail export sql --backup-dir /backups --source main --out main.sql\n" +
			"  dbtrail export sql --backup-dir /backups --snapshot 20261129T061500Z --table shop.orders --out - | mariadb shop\n" +
			"  dbtrail export sql --at '2026-11-29 08:00:00' --schema shop --out /exports/shop-0800.sql",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if at != "" {
				m.source, m.tables = source, tables
				return runExportSQLAt(cmd, g, &m, at, out, maxBytes)
			}
			if len(m.schemas) > 0 {
				return fmt.Errorf("--schema needs --at (name a snapshot's tables with --table)")
			}
			snap, err := openBackupSnapshot(backupDir, source, snapID)
			if err != nil {
				return err
			}
			opts := sqlexport.Options{MaxStatementBytes: maxBytes, Tables: tables, TempDir: workDir}
			var st sqlexport.Stats
			export := func(w io.Writer) error {
				var err error
				st, err = sqlexport.SnapshotContext(cmd.Context(), w, snap, opts)
				return err
			}
			report := cmd.OutOrStdout()
			if out == "-" {
				report = cmd.ErrOrStderr()
				err = export(cmd.OutOrStdout())
			} else {
				err = atomicfile.Write(out, filemode.File(), export) // an export holds every row
			}
			if err != nil {
				return fmt.Errorf("export snapshot %s: %w", snap.Manifest.SnapshotID, err)
			}
			g.log.Debug("export written", "snapshot", snap.Manifest.SnapshotID, "out", out, "bytes", st.Bytes)
			fmt.Fprintf(report, "exported snapshot %s of %s: %d tables, %d rows, %d INSERT statements (largest %d bytes), %d bytes to %s\n",
				snap.Manifest.SnapshotID, source, st.Tables, st.Rows, st.Statements, st.LargestStatement, st.Bytes, out)
			if st.Oversize > 0 {
				fmt.Fprintf(report, "warning: %d INSERT statements hold a single row longer than --max-statement-bytes; load with max_allowed_packet of at least %d bytes on client and server\n",
					st.Oversize, st.LargestStatement)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&backupDir, "backup-dir", "", "backup folder holding <source>/snapshots and <source>/current")
	f.StringVar(&source, "source", "main", "source name")
	f.StringVar(&snapID, "snapshot", "current", "snapshot id (e.g. 20261129T061500Z) or current")
	f.StringVar(&out, "out", "-", "file to write, or - for standard output")
	f.StringArrayVar(&tables, "table", nil, "export only this table, as schema.table (repeatable; default every table)")
	f.IntVar(&maxBytes, "max-statement-bytes", sqlexport.DefaultMaxStatementBytes, "longest INSERT statement in bytes (keep it below the loader's max_allowed_packet)")
	f.StringVar(&workDir, "work-dir", "", "scratch folder for reading tables with a chain (default the system temp folder)")
	f.StringVar(&at, "at", "", "export the tables as they were at moment T (time, seq:N, file:pos, GTID or latest) through the Export workflow")
	f.StringArrayVar(&m.schemas, "schema", nil, "with --at: only the tables of this schema (repeatable)")
	f.IntVar(&m.parallel, "parallel", 2, "with --at: tables rebuilt at once")
	m.tf.register(f)
	return cmd
}

// openBackupSnapshot opens snapshot id ("" or "current" for the one current
// names) of source under backupDir.
func openBackupSnapshot(backupDir, source, id string) (*snapshot.Snapshot, error) {
	if backupDir == "" {
		return nil, fmt.Errorf("--backup-dir (or %s) is required", envName("backup-dir"))
	}
	if source == "" || source == "." || source == ".." || strings.ContainsAny(source, `/\`) {
		return nil, fmt.Errorf("--source %q: want a source name (one folder name)", source)
	}
	srcDir := filepath.Join(backupDir, source)
	if id == "" || id == "current" {
		cur := filepath.Join(srcDir, snapshot.CurrentLink)
		if _, err := os.Lstat(cur); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("source %s has no published snapshot (%s does not exist): run a backup first", source, cur)
		}
		return snapshot.OpenCurrent(srcDir)
	}
	if _, err := snapshot.ParseSnapshotID(id); err != nil {
		return nil, fmt.Errorf("--snapshot: %w (want an id such as 20261129T061500Z, or current)", err)
	}
	return snapshot.OpenSnapshot(snapshot.Folder(srcDir).Snapshot(id))
}
