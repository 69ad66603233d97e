package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/internal/views"
)

// newViewsCmd is `dbtrail views`: write <backup dir>/<source>/views.sql, the
// DuckDB views over current/ (DESIGN.md "Snapshot layout"). The columns come
// from the snapshot current points at; the file is replaced atomically.
func newViewsCmd(g *globals) *cobra.Command {
	var backupDir, source, out string
	cmd := &cobra.Command{
		Use:   "views",
		Short: "Write views.sql: DuckDB views over the newest snapshot of a source",
		Long: "Write views.sql, one DuckDB view per table reading <backup dir>/<source>/current.\n" +
			"The views follow current as refreshes publish and chains grow; run this again\n" +
			"only after tables are added or dropped or a table's columns change.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
	return cmd
}

// writeViews writes views.sql to path atomically: a temp file in the same
// folder, fsynced, renamed over path, then the folder fsynced.
func writeViews(path, srcDir string, tables []views.TableRef) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriter(f)
	if err = views.Generate(bw, srcDir, tables); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return fmt.Errorf("sync folder of %s: %w", path, err)
		}
	}
	return nil
}

// shellQuote quotes s for a POSIX shell when it holds anything but safe
// characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:=@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
