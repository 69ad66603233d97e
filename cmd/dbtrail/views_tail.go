package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/tail"
	"github.com/dbtrail/dbtrail/internal/views"
)

// writeTailViews is `dbtrail views --tail-dir DIR`: the live tail of
// `dbtrail query` for a DuckDB CLI. It cuts the source at the newest
// captured transaction, stages every changed table's changes into the new
// folder dir and writes dir/views.sql over the newest snapshot and them
// (docs/tail.md). The views answer at that one cut until dir is removed.
// Hours the index dropped are read from archiveURL when it is set.
func writeTailViews(cmd *cobra.Command, g *globals, backupDir, source, dir, archiveURL string, raw bool) (err error) {
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--tail-dir %s: want a new folder (it exists or cannot be checked: %v)", dir, err)
	}
	past, done, err := openPast(cmd, g, backupDir, source, archiveURL)
	if err != nil {
		return fmt.Errorf("--tail-dir: %w", err)
	}
	defer done()
	if err := os.Mkdir(dir, filemode.Dir()); err != nil {
		return fmt.Errorf("--tail-dir: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	ctx := cmd.Context()
	st, err := (&tail.Reader{Past: past, Log: g.log}).Prepare(ctx, dir)
	if err != nil {
		return err
	}
	var names []string
	for name := range st.Views.Pending {
		names = append(names, name)
	}
	slices.Sort(names)
	if len(names) > 0 {
		if err := st.Views.Stage(ctx, names); err != nil {
			return err
		}
	}
	srcDir := filepath.Join(backupDir, source)
	tables, err := views.TablesFromSnapshot(filepath.Join(srcDir, snapshot.SnapshotsDir, st.Snapshot))
	if err != nil {
		return err
	}
	out := filepath.Join(dir, views.FileName)
	if err := atomicfile.Write(out, filemode.File(), func(w io.Writer) error {
		return views.WriteTail(w, views.Options{SourceDir: srcDir, Raw: raw}, tables, st.Views)
	}); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	w := cmd.OutOrStdout()
	fmt.Fprintln(w, st)
	fmt.Fprintf(w, "wrote %s: views of %d tables over snapshot %s and the changes of %d tables after it, staged in %s\n",
		out, len(tables), st.Snapshot, len(st.Views.Windows)+len(st.Views.Files), dir)
	fmt.Fprintf(w, "query them with a DuckDB CLI:\n  duckdb -init %s\n(they answer at this cut until %s is removed; the snapshot they read must not be pruned)\n",
		shellQuote(out), shellQuote(dir))
	return nil
}
