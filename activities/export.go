package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// PlanExport checks the export's output and input and decides it before
// anything is written: the moment's cut and rebuild plan (moment.PlanAt),
// or the range's cuts and its tables with changes. A moment or table it
// refuses, an unparsable moment, an unknown table and an output that
// exists (a folder export) are non-retryable. Then it checks the free
// space of Out's folder against the export's estimated size (exportNeed):
// too little is NoRoom, before anything is written. It creates the
// staging folder (next to Out: a rename moves it into place).
func (a *Activities) PlanExport(ctx context.Context, in PlanExportInput) (PlanExportResult, error) {
	_, stop := keepAlive(ctx)
	defer stop()
	sp := in.Spec
	if err := checkOut(sp); err != nil {
		return PlanExportResult{}, nonRetryable(ErrBadInput, err)
	}
	if _, err := a.source(sp.Source); err != nil {
		return PlanExportResult{}, err
	}
	out := PlanExportResult{ExportedAt: time.Now().UTC().Truncate(time.Microsecond)}
	sel := moment.Selection{Schemas: sp.Schemas, Tables: sp.Tables}
	switch sp.Format {
	case ExportSQL, ExportParquet:
		at, err := moment.ParseAt(sp.At)
		if err != nil {
			return PlanExportResult{}, nonRetryable(ErrBadInput, err)
		}
		plan, cat, err := a.past(ctx, sp.Source).Plan(ctx, at, sel)
		if err != nil {
			return PlanExportResult{}, momentErr(err)
		}
		out.Plan = &plan
		needs, err := a.rebuildNeeds(ctx, cat, plan)
		if err != nil {
			return PlanExportResult{}, err
		}
		for i, tp := range plan.Tables {
			out.Jobs = append(out.Jobs, ExportTableInput{Source: sp.Source, Format: sp.Format, Staging: in.Staging,
				Table: tp, Cut: plan.Cut, ExportedAt: out.ExportedAt, Spec: ExportSpecHeader{At: sp.At}, Need: needs[i]})
		}
	case ExportChanges:
		r, jobs, err := a.planChanges(ctx, sp, sel)
		if err != nil {
			return PlanExportResult{}, err
		}
		out.Range = r
		for _, j := range jobs {
			j.Staging, j.ExportedAt = in.Staging, out.ExportedAt
			out.Jobs = append(out.Jobs, j)
		}
	default:
		return PlanExportResult{}, nonRetryable(ErrBadInput, fmt.Errorf("export format %q: want sql, parquet or changes", sp.Format))
	}
	if err := a.checkRoom(filepath.Dir(sp.Out), exportNeed(sp.Format, out.Jobs), "export to "+sp.Out); err != nil {
		return PlanExportResult{}, err
	}
	if err := os.MkdirAll(in.Staging, 0o755); err != nil {
		return PlanExportResult{}, fmt.Errorf("export staging folder: %w", err)
	}
	return out, nil
}

// checkOut refuses an output the export cannot write: a relative path, a
// missing parent folder, an existing folder for a folder export, a folder
// for a .sql file.
func checkOut(sp ExportSpec) error {
	if sp.Out == "" || !filepath.IsAbs(sp.Out) {
		return fmt.Errorf("export output %q: want an absolute path on the worker's machine", sp.Out)
	}
	parent := filepath.Dir(sp.Out)
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return fmt.Errorf("export output %s: its folder %s does not exist on the worker's machine", sp.Out, parent)
	}
	st, err := os.Stat(sp.Out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("export output %s: %w", sp.Out, err)
	case sp.Format == ExportSQL && st.IsDir():
		return fmt.Errorf("export output %s is a folder; a .sql export is one file", sp.Out)
	case sp.Format != ExportSQL:
		return fmt.Errorf("export output %s exists: a %s export writes a new folder; choose another name or remove it", sp.Out, sp.Format)
	}
	return nil
}

// ExportTable writes one table of an export into the staging folder: a
// moment's table as a table file (the table at its snapshot with the
// window folded in, moment.Table.Write), or a range's changes (one file
// per shape). It heartbeats its stage and rows. A retry reuses a table
// file an earlier attempt completed (written under its name only when
// complete, its footer naming the same cut); anything else is redone.
// Before writing it checks the staging folder's free space for in.Need
// (NoRoom).
func (a *Activities) ExportTable(ctx context.Context, in ExportTableInput) (ExportTableResult, error) {
	set, stop := keepAlive(ctx)
	defer stop()
	if in.Format == ExportChanges {
		return a.exportChanges(ctx, in, set)
	}
	tp := in.Table
	name := tp.Key().String()
	rel, err := snapshot.TableFile(tp.Schema, tp.Table)
	if err != nil {
		return ExportTableResult{}, nonRetryable(ErrBadInput, err)
	}
	path := filepath.Join(in.Staging, filepath.FromSlash(rel))
	res := ExportTableResult{Schema: tp.Schema, Table: tp.Table}
	if f, ok := reusable(path, in.Cut); ok {
		f.Path = rel
		res.Files, res.Rows, res.Reused = []ExportFile{f}, f.Rows, true
		return res, nil
	}
	if err := a.checkRoom(in.Staging, in.Need, "export "+name); err != nil {
		return ExportTableResult{}, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return ExportTableResult{}, err
	}
	eng, release, err := a.engine(ctx)
	if err != nil {
		return ExportTableResult{}, err
	}
	failed := true
	defer func() { release(failed) }()
	progress := func(stage string, rows int64) { set(ExportProgress{Table: name, Stage: stage, Rows: rows}) }
	cat, err := a.catalog(ctx, in.Source)
	if err != nil {
		return ExportTableResult{}, err
	}
	rb := moment.Rebuilder{Source: in.Source, Engine: eng, Events: a.events(ctx, in.Source), Catalog: cat}
	t, err := rb.Open(ctx, tp, progress)
	if err != nil {
		return ExportTableResult{}, momentErr(fmt.Errorf("rebuild %s at %s: %w", name, in.Spec.At, err))
	}
	defer t.Close()
	cut, err := json.Marshal(in.Cut)
	if err != nil {
		return ExportTableResult{}, err
	}
	meta := snapshot.FooterMeta{CreateTable: t.Footer.CreateTable, Position: in.Cut.Position(), SnapshotID: tp.Snapshot,
		Source: in.Source, Extra: [][2]string{{snapshot.KeyAt, in.Spec.At}, {snapshot.KeyCut, string(cut)}, {snapshot.KeyBaseSnapshot, tp.Snapshot},
			{snapshot.KeyExportedAt, in.ExportedAt.Format(time.RFC3339Nano)}}}
	var wr snapshot.WriteResult
	f, err := writeHashed(path, func(w io.Writer) error {
		var err error
		wr, err = t.Write(ctx, meta, w, progress)
		return err
	})
	if err != nil {
		return ExportTableResult{}, momentErr(fmt.Errorf("rebuild %s at %s: %w", name, in.Spec.At, err))
	}
	f.Path, f.Rows = rel, wr.Rows
	failed = false
	res.Files, res.Rows, res.Events = []ExportFile{f}, wr.Rows, t.Events
	a.log(ctx).Info("table exported", "table", name, "rows", wr.Rows, "events", t.Events, "snapshot", tp.Snapshot)
	return res, nil
}

// reusable reports whether path is a complete table file of an earlier
// attempt at cut (its footer names the same cut seq), with its digest.
func reusable(path string, cut moment.Cut) (ExportFile, bool) {
	foot, err := snapshot.ReadFooter(path)
	if err != nil || foot.Position.Seq != cut.Seq {
		return ExportFile{}, false
	}
	if v, ok := foot.ExtraValue(snapshot.KeyCut); !ok || !sameCut(v, cut) {
		return ExportFile{}, false
	}
	d, err := digest.File(path)
	if err != nil {
		return ExportFile{}, false
	}
	return ExportFile{Rows: foot.Rows, SHA256: d.SHA256, Size: d.Size}, true
}

func sameCut(text string, cut moment.Cut) bool {
	var c moment.Cut
	return json.Unmarshal([]byte(text), &c) == nil && c.Seq == cut.Seq && c.Txn.Position == cut.Txn.Position
}

// writeHashed writes path crash-safely (complete under its name, or not
// at all) and returns its sha256 and size.
func writeHashed(path string, write func(io.Writer) error) (ExportFile, error) {
	d, err := atomicfile.WriteHashed(path, 0o644, write)
	if err != nil {
		return ExportFile{}, err
	}
	return ExportFile{SHA256: d.SHA256, Size: d.Size}, nil
}

// RemoveExportStaging removes the staging folder of a failed export; a
// folder already gone is success. It refuses a path that is not a staging
// folder's.
func (a *Activities) RemoveExportStaging(ctx context.Context, in RemoveStagingInput) error {
	base := filepath.Base(in.Staging)
	if !strings.HasPrefix(base, ".") || !strings.HasSuffix(base, StagingSuffix) {
		return nonRetryable(ErrBadPath, fmt.Errorf("refusing to remove %q: not an export staging folder", in.Staging))
	}
	if err := os.RemoveAll(in.Staging); err != nil {
		return fmt.Errorf("remove export staging %s: %w", in.Staging, err)
	}
	return nil
}

// StagingSuffix ends the name of every export staging folder.
const StagingSuffix = ".dbtrail-partial"

// StagingDir is the staging folder of an export to out by run runID: a
// hidden sibling of out, so that the finished export moves into place
// with one rename.
func StagingDir(out, runID string) string {
	id := runID
	if len(id) > 12 {
		id = id[:12]
	}
	return filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+"."+id+StagingSuffix)
}

// sortResults orders table results by schema, table.
func sortResults(rs []ExportTableResult) []ExportTableResult {
	out := slices.Clone(rs)
	slices.SortFunc(out, func(a, b ExportTableResult) int {
		if c := strings.Compare(a.Schema, b.Schema); c != 0 {
			return c
		}
		return strings.Compare(a.Table, b.Table)
	})
	return out
}
