package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/internal/views"
)

// newViewsCmd is `dbtrail views`: write <backup dir>/<source>/views.sql, the
// DuckDB views over current/ (see docs/snapshot-format.md). The columns come
// from the snapshot current points at; the file is replaced atomically.
func newViewsCmd(g *globals) *cobra.Command {
	var backupDir, source, out, tailDir, archiveURL string
	var raw bool
	var at viewsAt
	cmd := &cobra.Command{
		Use:   "views",
		Short: "Write views.sql: DuckDB views over the newest snapshot of a source",
		Long: "Write views.sql, one DuckDB view per table reading <backup dir>/<source>/current.\n" +
			"The views follow current as refreshes publish and chains grow, and the worker rewrites\n" +
			"<backup dir>/<source>/views.sql after a publish that adds or drops a table or changes\n" +
			"columns, in the form the file holds. The views are typed: DECIMAL, DATE, DATETIME and\n" +
			"TIMESTAMP (UTC), TIME read as DuckDB DECIMAL, DATE, TIMESTAMP and INTERVAL, and a value\n" +
			"the type cannot hold (a zero date, a DECIMAL beyond 38 digits) reads as NULL; --raw\n" +
			"keeps the stored text. `dbtrail query` needs no views.sql: it loads the views itself.\n\n" +
			"With --at T it exports the tables as they were at moment T (see dbtrail export\n" +
			"parquet --help) into a new folder --export-dir and writes views.sql there.\n\n" +
			"With --tail-dir DIR (and the index: --index-dsn or DBTRAIL_INDEX_DSN) it cuts the source at\n" +
			"the newest captured transaction, stages the changes after the newest snapshot into the new\n" +
			"folder DIR and writes DIR/views.sql: the snapshot plus those changes, at that one cut\n" +
			"(docs/tail.md), for a DuckDB CLI. Changes in hours the index already dropped are read\n" +
			"from --archive-url; without it such a tail is left out, with the reason.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if at.at != "" {
				if tailDir != "" {
					return fmt.Errorf("--tail-dir cuts at the newest captured transaction: not with --at")
				}
				return at.run(cmd, g, source)
			}
			if backupDir == "" {
				return fmt.Errorf("--backup-dir (or %s) is required", envName("backup-dir"))
			}
			if source == "" || source == "." || source == ".." || strings.ContainsAny(source, `/\`) {
				return fmt.Errorf("--source %q: want a source name (one folder name)", source)
			}
			if tailDir != "" {
				if out != "" {
					return fmt.Errorf("--tail-dir writes <dir>/views.sql: not with --out")
				}
				return writeTailViews(cmd, g, backupDir, source, tailDir, archiveURL, raw)
			}
			if archiveURL != "" {
				return fmt.Errorf("--archive-url is read by --tail-dir (the hours its tail reaches that the index dropped): not without it")
			}
			srcDir := filepath.Join(backupDir, source)
			if out == "" {
				out = filepath.Join(srcDir, views.FileName)
			}
			o := views.Options{SourceDir: srcDir, Raw: raw}
			tables, err := views.WriteFile(out, o)
			if err != nil {
				return err
			}
			g.log.Debug("views written", "file", out, "tables", len(tables), "raw", raw)
			form := "typed"
			if raw {
				form = "raw"
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "wrote %s: %s views of %d tables over %s\n", out, form, len(tables), o.SnapshotDir())
			fmt.Fprintf(w, "query them:\n  dbtrail query --backup-dir %s --source %s\nor with a DuckDB CLI:\n  duckdb -init %s\n",
				shellQuote(backupDir), shellQuote(source), shellQuote(out))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&backupDir, "backup-dir", "", "backup folder holding <source>/snapshots and <source>/current")
	f.StringVar(&source, "source", "main", "source name")
	f.StringVar(&out, "out", "", "file to write (default <backup dir>/<source>/views.sql)")
	f.BoolVar(&raw, "raw", false, "keep DECIMAL, DATE, DATETIME, TIMESTAMP and TIME as their stored text")
	f.StringVar(&tailDir, "tail-dir", "", "new folder: stage the changes after the newest snapshot here, cut at the newest captured transaction, and write views.sql over both")
	registerArchiveURL(f, &archiveURL, "with --tail-dir: archive location the tail reads the hours the index dropped from (without it such a tail is left out, with the reason)")
	at.register(f)
	return cmd
}

// shellQuote quotes s for a POSIX shell when it holds anything but safe
// characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:=@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
