package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/exportdir"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/internal/when"
	"github.com/dbtrail/dbtrail/payload"
)

// PlanExport checks the export's output and input and decides it before
// anything is written: the moment's cut and rebuild plan (moment.PlanAt),
// or the range's cuts and its tables with changes. A moment or table it
// refuses, an unparsable moment, an unknown table and an output that
// exists (a folder export) are non-retryable. Then it checks the free
// space of Out's folder against the export's estimated size (exportNeed):
// too little is NoRoom, before anything is written. It creates the
// staging folder (next to Out: a rename moves it into place).
func (a *Activities) PlanExport(ctx context.Context, in calls.PlanExportInput) (calls.PlanExportResult, error) {
	_, stop := keepAlive(ctx)
	defer stop()
	sp := in.Spec
	if err := exportdir.CheckOut(sp.Out, sp.Format, sp.Format == payload.ExportSQL); err != nil {
		return calls.PlanExportResult{}, nonRetryable(payload.ErrBadInput, err)
	}
	if _, err := a.source(sp.Source); err != nil {
		return calls.PlanExportResult{}, err
	}
	out := calls.PlanExportResult{ExportedAt: time.Now().UTC().Truncate(time.Microsecond)}
	sel := moment.Selection{Schemas: sp.Schemas, Tables: sp.Tables}
	switch sp.Format {
	case payload.ExportSQL, payload.ExportParquet:
		at, err := when.Parse(sp.At)
		if err != nil {
			return calls.PlanExportResult{}, nonRetryable(payload.ErrBadInput, err)
		}
		plan, cat, err := a.past(ctx, sp.Source).Plan(ctx, at, sel)
		if err != nil {
			return calls.PlanExportResult{}, momentErr(err)
		}
		out.Plan = &plan
		needs, err := a.rebuildNeeds(ctx, cat, plan, false)
		if err != nil {
			return calls.PlanExportResult{}, err
		}
		for i, tp := range plan.Tables {
			out.Jobs = append(out.Jobs, calls.ExportTableInput{Source: sp.Source, Format: sp.Format, Staging: in.Staging,
				Table: tp, Cut: plan.Cut, ExportedAt: out.ExportedAt, Spec: calls.ExportSpecHeader{At: sp.At}, Need: sureBytes(needs[i])})
		}
	case payload.ExportChanges:
		r, jobs, err := a.planChanges(ctx, sp, sel)
		if err != nil {
			return calls.PlanExportResult{}, err
		}
		out.Range = r
		for _, j := range jobs {
			j.Staging, j.ExportedAt = in.Staging, out.ExportedAt
			out.Jobs = append(out.Jobs, j)
		}
	default:
		return calls.PlanExportResult{}, nonRetryable(payload.ErrBadInput, fmt.Errorf("export format %q: want sql, parquet or changes", sp.Format))
	}
	if err := a.checkSpace(filepath.Dir(sp.Out), exportNeed(sp.Format, out.Jobs), "export to "+sp.Out); err != nil {
		return calls.PlanExportResult{}, err
	}
	if err := os.MkdirAll(in.Staging, filemode.Dir()); err != nil {
		return calls.PlanExportResult{}, fmt.Errorf("export staging folder: %w", err)
	}
	return out, nil
}

// ExportTable writes one table of an export into the staging folder: a
// moment's table as a table file (the table at its snapshot with the
// window folded in, moment.Table.Write), or a range's changes (one file
// per shape). It heartbeats its stage and rows. A retry reuses a table
// file an earlier attempt completed (written under its name only when
// complete, its footer naming the same cut); anything else is redone.
// Before writing it checks the staging folder's free space for in.Need
// (NoRoom).
func (a *Activities) ExportTable(ctx context.Context, in calls.ExportTableInput) (calls.ExportTableResult, error) {
	set, stop := keepAlive(ctx)
	defer stop()
	if in.Format == payload.ExportChanges {
		return a.exportChanges(ctx, in, set)
	}
	tp := in.Table
	name := tp.Key().String()
	rel, err := snapshot.TableFile(tp.Schema, tp.Table)
	if err != nil {
		return calls.ExportTableResult{}, nonRetryable(payload.ErrBadInput, err)
	}
	path := filepath.Join(in.Staging, filepath.FromSlash(rel))
	res := calls.ExportTableResult{Schema: tp.Schema, Table: tp.Table}
	if d, rows, ok := exportdir.Reusable(path, in.Cut); ok {
		f := calls.ExportFile{Path: rel, Rows: rows, SHA256: d.SHA256, Size: d.Size}
		res.Files, res.Rows, res.Reused = []calls.ExportFile{f}, rows, true
		return res, nil
	}
	if err := a.checkSpace(in.Staging, needOf(in.Need), "export "+name); err != nil {
		return calls.ExportTableResult{}, err
	}
	if err := os.MkdirAll(filepath.Dir(path), filemode.Dir()); err != nil {
		return calls.ExportTableResult{}, err
	}
	eng, release, err := a.engine(ctx)
	if err != nil {
		return calls.ExportTableResult{}, err
	}
	failed := true
	defer func() { release(failed) }()
	progress := func(stage string, rows int64) { set(calls.ExportProgress{Table: name, Stage: stage, Rows: rows}) }
	cat, err := a.catalog(ctx, in.Source)
	if err != nil {
		return calls.ExportTableResult{}, err
	}
	rb := moment.Rebuilder{Source: in.Source, Engine: eng, Events: a.events(ctx, in.Source), Catalog: cat}
	t, err := rb.Open(ctx, tp, progress)
	if err != nil {
		return calls.ExportTableResult{}, momentErr(fmt.Errorf("rebuild %s at %s: %w", name, in.Spec.At, err))
	}
	defer t.Close()
	cut, err := json.Marshal(in.Cut)
	if err != nil {
		return calls.ExportTableResult{}, err
	}
	meta := snapshot.FooterMeta{CreateTable: t.Footer.CreateTable, Position: in.Cut.Position(), SnapshotID: tp.Snapshot,
		Source: in.Source, Extra: [][2]string{{snapshot.KeyAt, in.Spec.At}, {snapshot.KeyCut, string(cut)}, {snapshot.KeyBaseSnapshot, tp.Snapshot},
			{snapshot.KeyExportedAt, in.ExportedAt.Format(time.RFC3339Nano)}}}
	var wr snapshot.WriteResult
	d, err := atomicfile.WriteHashed(path, filemode.File(), func(w io.Writer) error {
		var err error
		wr, err = t.Write(ctx, meta, w, progress)
		return err
	})
	if err != nil {
		return calls.ExportTableResult{}, momentErr(fmt.Errorf("rebuild %s at %s: %w", name, in.Spec.At, err))
	}
	failed = false
	res.Files = []calls.ExportFile{{Path: rel, Rows: wr.Rows, SHA256: d.SHA256, Size: d.Size}}
	res.Rows, res.Events = wr.Rows, t.Events
	res.Space = spaceneed.Record(spaceneed.KindExport, needOf(in.Need), exportedBytes(res.Files))
	a.log(ctx).Info("table exported", "table", name, "rows", wr.Rows, "events", t.Events, "snapshot", tp.Snapshot)
	return res, nil
}

// RemoveExportStaging removes the staging folder of a failed export; a
// folder already gone is success. It refuses a path that is not a staging
// folder's.
func (a *Activities) RemoveExportStaging(ctx context.Context, in calls.RemoveStagingInput) error {
	if !exportdir.IsStaging(in.Staging) {
		return nonRetryable(payload.ErrBadPath, fmt.Errorf("refusing to remove %q: not an export staging folder", in.Staging))
	}
	if err := os.RemoveAll(in.Staging); err != nil {
		return fmt.Errorf("remove export staging %s: %w", in.Staging, err)
	}
	return nil
}

// exportedBytes is the bytes of an export table's files.
func exportedBytes(files []calls.ExportFile) uint64 {
	var n uint64
	for _, f := range files {
		n += uint64(max(f.Size, 0))
	}
	return n
}

// sortResults orders table results by schema, table.
func sortResults(rs []calls.ExportTableResult) []calls.ExportTableResult {
	out := slices.Clone(rs)
	slices.SortFunc(out, func(a, b calls.ExportTableResult) int {
		if c := strings.Compare(a.Schema, b.Schema); c != 0 {
			return c
		}
		return strings.Compare(a.Table, b.Table)
	})
	return out
}
