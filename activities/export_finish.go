package activities

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/internal/sqlexport"
	"github.com/dbtrail/dbtrail/payload"
)

// ExportManifestName is the file a folder export (parquet, changes) holds
// beside its table files, written last.
const ExportManifestName = "export.json"

// FinishExport moves a complete export into place. A parquet or changes
// export gets export.json (and views.sql when asked) in its staging
// folder, which is then renamed to Out; a .sql export is composed from
// the staged table files into Out (written crash-safely) and the staging
// folder removed. A retry after it finished finds Out holding this run's
// export and succeeds.
func (a *Activities) FinishExport(ctx context.Context, in calls.FinishExportInput) (calls.FinishExportResult, error) {
	_, stop := keepAlive(ctx)
	defer stop()
	sp := in.Spec
	tables := sortResults(in.Tables)
	if _, err := os.Stat(in.Staging); errors.Is(err, fs.ErrNotExist) {
		if done, n := finishedBy(sp, in.RunID); done {
			return calls.FinishExportResult{Out: sp.Out, Bytes: n}, nil
		}
		return calls.FinishExportResult{}, nonRetryable(payload.ErrBadPath, fmt.Errorf("export staging folder %s is gone and %s does not hold this export", in.Staging, sp.Out))
	}
	if sp.Format == payload.ExportSQL {
		return a.finishSQL(ctx, in, tables)
	}
	m := calls.ExportManifest{Version: 1, Source: sp.Source, Format: sp.Format, Run: in.RunID, ExportedAt: in.Plan.ExportedAt, Tables: tables}
	if p := in.Plan.Plan; p != nil {
		m.At, m.Cut, m.BaseSnapshot = sp.At, &p.Cut, p.Base
	}
	if r := in.Plan.Range; r != nil {
		m.From, m.Until, m.Range = sp.From, sp.Until, r
	}
	var size int64
	for _, t := range tables {
		for _, f := range t.Files {
			size += f.Size
		}
	}
	if sp.Views && sp.Format == payload.ExportParquet {
		if err := atomicfile.Write(filepath.Join(in.Staging, "views.sql"), filemode.File(), func(w io.Writer) error {
			return writeExportViews(w, sp.Out, m)
		}); err != nil {
			return calls.FinishExportResult{}, err
		}
	}
	if err := atomicfile.Write(filepath.Join(in.Staging, ExportManifestName), filemode.File(), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(m)
	}); err != nil {
		return calls.FinishExportResult{}, err
	}
	if err := os.Rename(in.Staging, sp.Out); err != nil {
		return calls.FinishExportResult{}, nonRetryable(payload.ErrBadInput, fmt.Errorf("move the export into place: %w (was %s created meanwhile?)", err, sp.Out))
	}
	if err := atomicfile.SyncDir(filepath.Dir(sp.Out)); err != nil {
		return calls.FinishExportResult{}, err
	}
	return calls.FinishExportResult{Out: sp.Out, Bytes: size}, nil
}

// finishSQL composes the .sql file from the staged table files, after
// checking its folder has room for their text (spaceneed.Text).
func (a *Activities) finishSQL(ctx context.Context, in calls.FinishExportInput, tables []calls.ExportTableResult) (calls.FinishExportResult, error) {
	sp := in.Spec
	if done, n := finishedBy(sp, in.RunID); done {
		// An earlier attempt wrote the file and died removing the staging
		// folder.
		if err := os.RemoveAll(in.Staging); err != nil {
			a.log(ctx).Warn("export staging folder not removed", "staging", in.Staging, "error", err)
		}
		return calls.FinishExportResult{Out: sp.Out, Bytes: n}, nil
	}
	var paths []string
	var staged spaceneed.Table
	for _, t := range tables {
		for _, f := range t.Files {
			p := filepath.Join(in.Staging, filepath.FromSlash(f.Path))
			paths = append(paths, p)
			staged.File += uint64(max(f.Size, 0))
			if st, err := snapshot.ReadFileStats(p); err == nil {
				staged.Plain += uint64(max(st.Plain, 0))
				staged.PlainBinary += uint64(max(st.PlainBinary, 0))
			}
		}
	}
	est := spaceneed.Text(staged)
	if err := a.checkSpace(filepath.Dir(sp.Out), est, "write "+sp.Out); err != nil {
		return calls.FinishExportResult{}, err
	}
	header := []string{fmt.Sprintf("dbtrail export of source %s at moment %s: %d tables", sp.Source, sp.At, len(tables))}
	if p := in.Plan.Plan; p != nil {
		header = append(header, "cut: "+p.Cut.String(), "rebuilt from snapshot "+p.Base)
	}
	header = append(header, "export run "+in.RunID)
	var st sqlexport.Stats
	err := atomicfile.Write(sp.Out, filemode.File(), func(w io.Writer) error {
		var err error
		st, err = sqlexport.Files(w, header, paths, sqlexport.Options{MaxStatementBytes: sp.MaxStatementBytes})
		return err
	})
	if err != nil {
		return calls.FinishExportResult{}, err
	}
	if err := os.RemoveAll(in.Staging); err != nil {
		a.log(ctx).Warn("export staging folder not removed", "staging", in.Staging, "error", err)
	}
	return calls.FinishExportResult{Out: sp.Out, Bytes: st.Bytes, Statements: st.Statements, LargestStatement: st.LargestStatement, Oversize: st.Oversize,
		Space: spaceneed.Record(spaceneed.KindSQL, est, uint64(max(st.Bytes, 0)))}, nil
}

// finishedBy reports whether sp.Out holds the finished export of run, and
// its size (a .sql file's bytes; 0 for a folder).
func finishedBy(sp payload.ExportSpec, run string) (bool, int64) {
	if sp.Format == payload.ExportSQL {
		f, err := os.Open(sp.Out)
		if err != nil {
			return false, 0
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return false, 0
		}
		sc := bufio.NewScanner(f)
		for i := 0; i < 8 && sc.Scan(); i++ {
			if sc.Text() == "-- export run "+run {
				return true, st.Size()
			}
		}
		return false, 0
	}
	b, err := os.ReadFile(filepath.Join(sp.Out, ExportManifestName))
	var m calls.ExportManifest
	if err != nil || json.Unmarshal(b, &m) != nil {
		return false, 0
	}
	return m.Run == run, 0
}

// writeExportViews writes DuckDB views over a parquet export's table files
// at out: one view per table, "schema"."table", reading its file.
func writeExportViews(w io.Writer, out string, m calls.ExportManifest) error {
	abs := filepath.ToSlash(out)
	fmt.Fprintf(w, "-- DuckDB views over the dbtrail export %s of source %s at %s (generated; do not edit).\n", abs, m.Source, m.At)
	if m.Cut != nil {
		fmt.Fprintf(w, "-- cut: %s\n", strings.ReplaceAll(m.Cut.String(), "\n", " "))
	}
	fmt.Fprintf(w, "-- Load with `duckdb -init views.sql` or `.read views.sql`.\n")
	schemas := map[string]bool{}
	qi := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	qs := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	glob := strings.NewReplacer("*", "[*]", "?", "[?]", "[", "[[]")
	for _, t := range m.Tables {
		if !schemas[t.Schema] {
			schemas[t.Schema] = true
			fmt.Fprintf(w, "\nCREATE SCHEMA IF NOT EXISTS %s;\n", qi(t.Schema))
		}
		for _, f := range t.Files {
			_, err := fmt.Fprintf(w, "CREATE OR REPLACE VIEW %s.%s AS SELECT * FROM read_parquet(%s);\n",
				qi(t.Schema), qi(t.Table), qs(glob.Replace(abs+"/"+f.Path)))
			if err != nil {
				return err
			}
		}
	}
	return nil
}
