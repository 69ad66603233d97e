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
	"github.com/dbtrail/dbtrail/internal/views"
)

// newViewsCmd is `dbtrail views`: write <backup dir>/<source>/views.sql, the
// DuckDB views over current/ (see docs/snapshot-format.md). The columns come
// from the snapshot current points at; the file is replaced atomically.
func newViewsCmd(g *globals) *cobra.Command {
	var backupDir, source, out string
	var at viewsAt
	cmd := &cobra.Command{
		Use:   "views",
		Short: "Write views.sql: DuckDB views over the newest snapshot of a source",
		Long: "Write views.sql, one DuckDB view per table reading <backup dir>/<source>/current.\n" +
			"The views follow current as refreshes publish and chains grow; run this again\n" +
			"only after tables are added or dropped or a table's columns change.\n\n" +
			"With --at T it exports the tables as they were at moment T (see dbtrail export\n" +
			"parquet --help) into a new folder --export-dir and writes views.sql there.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if at.at != "" {
				return at.run(cmd, g, source)
			}
			if backupDir == "" {
				return fmt.Errorf("--backup-dir (or %s) is required", envName("backup-dir"))
			}
			if source == "" || source == "." || source == ".." || strings.ContainsAny(source, `/\`) {
				return fmt.Errorf("--source %q: want a source name (one folder name)", source)
			}
			srcDir := filepath.Join(backupDir, source)
			if out == "" {
				out = filepath.Join(srcDir, "views.sql")
			}
			cur := filepath.Join(srcDir, "current")
			if _, err := os.Stat(cur); errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("source %s has no published snapshot (%s does not exist): run a backup first", source, cur)
			}
			tables, err := views.TablesFromSnapshot(cur)
			if err != nil {
				return err
			}
			if len(tables) == 0 {
				return fmt.Errorf("the snapshot at %s holds no table", cur)
			}
			if err := writeViews(out, srcDir, tables); err != nil {
				return err
			}
			g.log.Debug("views written", "file", out, "tables", len(tables))
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "wrote %s: views of %d tables over %s\n", out, len(tables), cur)
			fmt.Fprintf(w, "query them:\n  duckdb -init %s\nor, inside duckdb:\n  .read %s\n", shellQuote(out), shellQuote(out))
			fmt.Fprintf(w, "The views follow current as new snapshots are published; run dbtrail views again after tables are added or dropped or their columns change.\n")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&backupDir, "backup-dir", "", "backup folder holding <source>/snapshots and <source>/current")
	f.StringVar(&source, "source", "main", "source name")
	f.StringVar(&out, "out", "", "file to write (default <backup dir>/<source>/views.sql)")
	at.register(f)
	return cmd
}

// writeViews writes views.sql to path crash-safely.
func writeViews(path, srcDir string, tables []views.TableRef) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error { return views.Generate(w, srcDir, tables) })
}

// shellQuote quotes s for a POSIX shell when it holds anything but safe
// characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:=@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
