package activities

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/exportdir"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/internal/when"
	"github.com/dbtrail/dbtrail/payload"
)

// planChanges cuts the range [From, Until) and lists the tables to write:
// those of sel with changes in the range, and every table sel names.
func (a *Activities) planChanges(ctx context.Context, sp payload.ExportSpec, sel moment.Selection) (*calls.ChangesRange, []calls.ExportTableInput, error) {
	from, err1 := when.Parse(sp.From)
	until, err2 := when.Parse(sp.Until)
	if err := errors.Join(err1, err2); err != nil {
		return nil, nil, nonRetryable(payload.ErrBadInput, err)
	}
	past := a.past(ctx, sp.Source)
	r, err := past.ResolveRange(ctx, from, until)
	if err != nil {
		return nil, nil, momentErr(err)
	}
	hist, err := a.Index.SchemaHistory(ctx, sp.Source)
	if err != nil {
		return nil, nil, err
	}
	counts, err := past.ChangeCounts(ctx, r.After(), r.Upto())
	if err != nil {
		return nil, nil, momentErr(err)
	}
	tables, err := moment.SelectChanges(hist, r.Upto(), sel, counts)
	if err != nil {
		return nil, nil, nonRetryable(payload.ErrBadInput, err)
	}
	cr := &calls.ChangesRange{From: r.From, Until: r.Until}
	var jobs []calls.ExportTableInput
	for _, t := range tables {
		jobs = append(jobs, calls.ExportTableInput{Source: sp.Source, Format: payload.ExportChanges, Schema: t.Key.Schema, Name: t.Key.Table,
			Range: cr, Always: t.Named, Spec: calls.ExportSpecHeader{From: sp.From, Until: sp.Until},
			Need: sureBytes(spaceneed.Changes())})
	}
	return cr, jobs, nil
}

// exportChanges writes the changes of one table in the range, streamed
// from the events seam, one file per shape (exportdir.ChangesWriter). A
// retry redoes the table.
func (a *Activities) exportChanges(ctx context.Context, in calls.ExportTableInput, set func(any)) (calls.ExportTableResult, error) {
	k := moment.TableKey{Schema: in.Schema, Table: in.Name}
	res := calls.ExportTableResult{Schema: in.Schema, Table: in.Name}
	if err := exportdir.StartChanges(in.Staging, in.Schema, in.Name); err != nil {
		return res, err
	}
	if err := a.checkSpace(in.Staging, needOf(in.Need), "export changes of "+k.String()); err != nil {
		return res, err
	}
	hist, err := a.Index.SchemaHistory(ctx, in.Source)
	if err != nil {
		return res, err
	}
	rangeJSON, err := json.Marshal(map[string]any{"from": in.Range.From, "until": in.Range.Until})
	if err != nil {
		return res, err
	}
	local := moment.LocalCatalog{SourceDir: a.sourceDir(in.Source)}
	meta := exportdir.ChangesMeta{Source: in.Source,
		Extra: [][2]string{{snapshot.KeyFrom, in.Spec.From}, {snapshot.KeyUntil, in.Spec.Until}, {snapshot.KeyRange, string(rangeJSON)},
			{snapshot.KeyExportedAt, in.ExportedAt.Format(time.RFC3339Nano)}},
		CreateTable: func(v change.SchemaVersion, stored *schema.Table) string {
			return exportdir.CreateTableOf(ctx, local, v, stored)
		}}
	w, err := exportdir.NewChangesWriter(in.Staging, k, hist, in.Range.Until.Seq, meta)
	if err != nil {
		return res, changesErr(err)
	}
	defer w.Abort()
	name := k.String()
	err = a.events(ctx, in.Source).TableEvents(ctx, in.Source, in.Schema, in.Name, in.Range.From.Seq, in.Range.Until.Seq, func(e change.Event) error {
		if err := w.Add(e); err != nil {
			return err
		}
		if w.Events()%65536 == 0 {
			set(calls.ExportProgress{Table: name, Stage: "changes", Rows: w.Events()})
		}
		return nil
	})
	if err != nil {
		return calls.ExportTableResult{}, changesErr(err)
	}
	files, err := w.Finish(in.Always)
	if err != nil {
		return calls.ExportTableResult{}, changesErr(err)
	}
	for _, f := range files {
		res.Files = append(res.Files, calls.ExportFile{Path: f.Path, Rows: f.Rows, SHA256: f.SHA256, Size: f.Size})
	}
	res.Events = w.Events()
	res.Rows = res.Events
	res.Space = spaceneed.Record(spaceneed.KindChanges, needOf(in.Need), exportedBytes(res.Files))
	a.log(ctx).Info("table changes exported", "table", name, "changes", res.Events, "files", len(res.Files))
	return res, nil
}

// changesErr marks changes that cannot be written as they are as BadInput.
func changesErr(err error) error {
	if errors.Is(err, exportdir.ErrBadChanges) {
		return nonRetryable(payload.ErrBadInput, err)
	}
	return err
}
