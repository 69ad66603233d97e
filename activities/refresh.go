package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/compaction"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/schemahist"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
)

// PlanRefresh reads everything the refresh plan depends on (the capture
// checkpoint as the cut, the current snapshot and its footers, schema
// history, gaps, change counts, waiting compacted ranges) and returns
// foldplan.Make's decision. It writes nothing. Its result is recorded in the
// workflow history, so a retried workflow runs the same plan.
func (a *Activities) PlanRefresh(ctx context.Context, in calls.PlanRefreshInput) (calls.PlanRefreshResult, error) {
	_, stop := keepAlive(ctx)
	defer stop()
	src, err := a.source(in.Source)
	if err != nil {
		return calls.PlanRefreshResult{}, err
	}
	out := calls.PlanRefreshResult{DumpConfigured: src.DSN != ""}
	cp, found, err := a.Index.LoadCheckpoint(ctx, in.Source)
	if err != nil {
		return calls.PlanRefreshResult{}, err
	}
	if !found {
		out.Plan = foldplan.Plan{Refused: true, Reasons: []string{"capture of " + in.Source + " has no checkpoint yet"}}
		return out, nil
	}
	out.Cut = cp.Pos()
	pin := foldplan.Input{Cut: cp.LastSeq, CutPos: out.Cut.Coords(), PrevLocal: true, Now: time.Now().UTC(),
		TableDeltas: in.TableDeltas, MaxChainAge: in.MaxChainAge}
	dir := a.sourceDir(in.Source)
	prev, err := snapshot.OpenCurrent(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		out.Plan = foldplan.Make(pin) // refused: no previous snapshot
		return out, nil
	case err != nil:
		return calls.PlanRefreshResult{}, fmt.Errorf("plan refresh %s: %w", in.Source, err)
	}
	m := prev.Manifest
	pin.Prev = &m
	out.Prev = m.SnapshotID
	if m.Position.Seq > 0 {
		out.PrevSeq = m.Position.Seq
	}
	foots, err := prev.Footers()
	if err != nil {
		return calls.PlanRefreshResult{}, nonRetryable(payload.ErrBrokenSnapshot, err)
	}
	pin.Footers = map[foldplan.TableKey]snapshot.FooterMeta{}
	for i, t := range m.Tables {
		pin.Footers[foldplan.TableKey{Schema: t.Schema, Table: t.Table}] = foots[i]
	}
	if why, err := a.droppedInWindow(ctx, in.Source, out.PrevSeq); err != nil {
		return calls.PlanRefreshResult{}, err
	} else if why != "" {
		out.Plan = foldplan.Plan{Refused: true, Reasons: []string{why}}
		return out, nil
	}
	if err := a.planIndexInputs(ctx, in.Source, out.PrevSeq, &pin); err != nil {
		return calls.PlanRefreshResult{}, err
	}
	if pin.Compacted, err = compaction.ReadAll(snapshot.Folder(dir), m); err != nil {
		return calls.PlanRefreshResult{}, err
	}
	if pin.Redumped, err = redumpedTables(dir, in.Redumped); err != nil {
		return calls.PlanRefreshResult{}, err
	}
	out.Plan = foldplan.Make(pin)
	if !out.Plan.Refused {
		a.createTables(ctx, in.Source, out.Plan, pin.Current, &out)
	}
	return out, nil
}

// redumpedTables reads the tables of partial snapshot id in the source
// folder dir: its position and every table file footer's definition.
func redumpedTables(dir, id string) (map[foldplan.TableKey]foldplan.Redumped, error) {
	if id == "" {
		return nil, nil
	}
	snap, err := snapshot.OpenPartial(dir, id)
	if err != nil {
		return nil, nonRetryable(payload.ErrBrokenSnapshot, fmt.Errorf("partial snapshot %s: %w", id, err))
	}
	foots, err := snap.Footers()
	if err != nil {
		return nil, nonRetryable(payload.ErrBrokenSnapshot, fmt.Errorf("partial snapshot %s: %w", id, err))
	}
	m := snap.Manifest
	out := map[foldplan.TableKey]foldplan.Redumped{}
	for i, t := range m.Tables {
		out[foldplan.TableKey{Schema: t.Schema, Table: t.Table}] = foldplan.Redumped{SnapshotID: id,
			Seq: uint64(max(m.Position.Seq, 0)), Position: m.Position, Def: foots[i].Table}
	}
	return out, nil
}

// droppedInWindow says why a refresh from prevSeq cannot fold its window
// on this worker: an archived hour holding events after prevSeq has left
// the index (the previous snapshot is older than what the index keeps,
// e.g. a machine that was down for longer than --index-hours) and this
// worker has no archive location to read it from. With one, the window's
// archived events are folded like the index's (Activities.events).
func (a *Activities) droppedInWindow(ctx context.Context, source string, prevSeq uint64) (string, error) {
	if a.Remote != nil {
		return "", nil
	}
	recs, err := a.Index.Archives(ctx, source)
	if err != nil {
		return "", err
	}
	for _, r := range recs {
		if !r.DroppedAt.IsZero() && r.LastSeq > prevSeq {
			return fmt.Sprintf("the events after the previous snapshot (seq %d) reach archived hour %s (seqs %d..%d), which has left the index, and this worker has no archive location (--archive-url) to read it from: take a full backup",
				prevSeq, change.HourTime(r.Hour).Format("2006-01-02T15Z"), r.FirstSeq, r.LastSeq), nil
		}
	}
	return "", nil
}

// planIndexInputs fills the plan's inputs that come from the index.
func (a *Activities) planIndexInputs(ctx context.Context, source string, prevSeq uint64, pin *foldplan.Input) error {
	counts, err := a.past(ctx, source).ChangeCounts(ctx, prevSeq, pin.Cut)
	if err != nil {
		return err
	}
	pin.Changes = map[foldplan.TableKey]int64{}
	for k, n := range counts {
		pin.Changes[foldplan.TableKey{Schema: k.Schema, Table: k.Table}] = n
	}
	hist, err := a.Index.SchemaHistory(ctx, source)
	if err != nil {
		return err
	}
	pin.Current = map[foldplan.TableKey]*schema.Table{}
	for _, v := range hist {
		if schema.IsSystemSchema(v.Schema) || !schemahist.AtOrBefore(v, pin.Cut, pin.CutPos) {
			continue
		}
		if v.Seq >= prevSeq {
			pin.Schemas = append(pin.Schemas, v)
		}
		pin.Current[foldplan.TableKey{Schema: v.Schema, Table: v.Table}] = schemahist.StoredDef(v.Definition) // nil: dropped
	}
	pin.Gaps, err = a.Index.Gaps(ctx, source)
	return err
}

// RefreshTable executes one table's plan into the staged snapshot: link
// hard-links the previous files, pair also writes the window's delta pair,
// rewrite folds the previous files and the window into a new table file
// with an empty 000000 pair. It heartbeats its stage and rows. A retry
// redoes the table from the start: every path is deterministic and
// overwritten, and the same window gives the same files.
//
// Before it writes, it checks the backup folder's free space against its
// estimate (refreshNeed, package room); when it is short, the refresh's
// retention (the worker's policy, Activities.Retention) runs first if it would remove something; still
// too little is NoRoom, non-retryable, before anything is written. A
// folder that fills while it writes is NoRoom too (noSpace). Its result
// records the estimate and the bytes written (Space).
func (a *Activities) RefreshTable(ctx context.Context, in calls.RefreshTableInput) (calls.ConvertTableResult, error) {
	if in.Shared {
		return a.refreshShared(ctx, in)
	}
	if foldsLineage(in.Table) {
		return a.refreshLineage(ctx, in)
	}
	tp := in.Table
	dir := a.sourceDir(in.Source)
	prev, mt, err := openPrevTable(dir, in)
	if err != nil {
		return calls.ConvertTableResult{}, err
	}
	est := refreshNeed(prev, mt, tp)
	what := string(tp.Action) + " " + tp.Key.String()
	if err := a.checkSpaceOrRetain(ctx, in.Source, dir, est, what); err != nil {
		return calls.ConvertTableResult{}, err
	}
	out, err := a.refreshInto(ctx, in, dir, prev, mt)
	if err != nil {
		return calls.ConvertTableResult{}, noSpace(err, dir, what)
	}
	recordRefresh(&out, tp, est)
	return out, nil
}

// openPrevTable opens the previous snapshot in the source folder dir and
// finds the table in its manifest.
func openPrevTable(dir string, in calls.RefreshTableInput) (*snapshot.Snapshot, snapshot.ManifestTable, error) {
	tp := in.Table
	prev, err := snapshot.OpenSnapshot(snapshotDir(dir, in.Prev))
	if err != nil {
		return nil, snapshot.ManifestTable{}, fmt.Errorf("refresh %s: %w", tp.Key, err)
	}
	mt, ok := prev.Manifest.Table(tp.Key.Schema, tp.Key.Table)
	if !ok {
		return nil, snapshot.ManifestTable{}, nonRetryable(payload.ErrBrokenSnapshot, fmt.Errorf("refresh %s: not in snapshot %s", tp.Key, in.Prev))
	}
	return prev, mt, nil
}

// refreshInto executes the table's plan into the staging folder of
// in.SnapshotID in the source folder dir, reading the previous snapshot
// prev (a snapshot of dir).
func (a *Activities) refreshInto(ctx context.Context, in calls.RefreshTableInput, dir string, prev *snapshot.Snapshot,
	mt snapshot.ManifestTable) (calls.ConvertTableResult, error) {
	tp := in.Table
	b, progress, stop, err := stageTable(ctx, dir, in)
	if err != nil {
		return calls.ConvertTableResult{}, err
	}
	defer stop()
	switch tp.Action {
	case foldplan.ActionLink:
		return a.linkOrPair(ctx, in, prev, mt, b, nil)
	case foldplan.ActionPair, foldplan.ActionRewrite:
		job, err := a.startFold(ctx, prev, mt, in, progress)
		if err != nil {
			return calls.ConvertTableResult{}, err
		}
		job.dir = dir
		var out calls.ConvertTableResult
		if tp.Action == foldplan.ActionPair {
			out, err = a.linkOrPair(ctx, in, prev, mt, b, job)
		} else {
			out, err = a.rewriteTable(ctx, in, prev, mt, b, job)
		}
		job.release(err != nil)
		return out, err
	}
	return calls.ConvertTableResult{}, nonRetryable(payload.ErrBadPlan, fmt.Errorf("refresh %s: action %q cannot be executed", tp.Key, tp.Action))
}

// stageTable attaches to the staging folder of in.SnapshotID in the source
// folder dir and starts heartbeating the table's progress; stop ends it.
func stageTable(ctx context.Context, dir string, in calls.RefreshTableInput) (*snapshot.Builder, fold.Progress, func(), error) {
	b, err := snapshot.AttachBuilder(dir, in.SnapshotID)
	if err != nil {
		return nil, nil, nil, err
	}
	set, stop := keepAlive(ctx)
	return b, func(stage string, rows int64) {
		set(payload.RefreshTableProgress{Table: in.Table.Key.String(), Stage: stage, Rows: rows})
	}, stop, nil
}

// foldJob is what folding one table needs: its definition, the footer of
// the files written for it, an engine from the pool (release it with
// whether the work failed), the progress to report and the source folder
// whose snapshots it reads.
type foldJob struct {
	dir      string
	def      *schema.Table
	meta     snapshot.FooterMeta
	eng      *fold.Engine
	release  func(failed bool)
	progress fold.Progress
}

// startFold reads the table's definition and takes an engine.
func (a *Activities) startFold(ctx context.Context, prev *snapshot.Snapshot, mt snapshot.ManifestTable,
	in calls.RefreshTableInput, progress fold.Progress) (*foldJob, error) {
	def, meta, err := tableMeta(prev, mt, in)
	if err != nil {
		return nil, err
	}
	eng, release, err := a.engine(ctx)
	if err != nil {
		return nil, err
	}
	return &foldJob{def: def, meta: meta, eng: eng, release: release, progress: progress}, nil
}

// linkOrPair links the table file and chain forward and, for a pair (job
// not nil), writes the window's pair after them.
func (a *Activities) linkOrPair(ctx context.Context, in calls.RefreshTableInput, prev *snapshot.Snapshot, mt snapshot.ManifestTable,
	b *snapshot.Builder, job *foldJob) (calls.ConvertTableResult, error) {
	tp := in.Table
	out := calls.ConvertTableResult{Schema: mt.Schema, Table: mt.Table, File: mt.File, Rows: mt.Rows,
		Fingerprint: mt.Fingerprint.String(), Kind: tp.Kind, Origin: snapshot.OriginLinked, CreateTable: mt.CreateTable}
	if in.CreateTable != "" {
		out.CreateTable = in.CreateTable
	}
	if tp.UseCompacted != nil {
		out.Origin = snapshot.OriginCompacted
	}
	for i, l := range tp.Links {
		from := prev.Path(l.Src)
		if l.FromCompact {
			from = snapshot.Folder(a.sourceDir(in.Source)).Compact(l.Src)
		}
		if err := b.Link(l.Dst, from, l.Digest); err != nil {
			return calls.ConvertTableResult{}, err
		}
		if i == 0 {
			out.SHA256, out.Size = l.Digest.SHA256, l.Digest.Size
			continue
		}
		out.Chain = append(out.Chain, calls.ChainFile{Path: l.Dst, SHA256: l.Digest.SHA256, Size: l.Digest.Size})
	}
	if job == nil {
		return out, nil
	}
	out.Origin = snapshot.OriginPair
	if tp.UseCompacted != nil {
		out.Origin = snapshot.OriginCompactedPair
	}
	w, err := job.eng.WriteWindow(job.def, scratchName(in), a.windowEvents(ctx, in, job.def))
	if err != nil {
		return calls.ConvertTableResult{}, windowErr(err)
	}
	defer w.Remove()
	entry := foldplan.Entry(tp.Next, tp.Next)
	pdRel, err1 := snapshot.ChainFile(mt.Schema, mt.Table, entry, "posdel")
	upRel, err2 := snapshot.ChainFile(mt.Schema, mt.Table, entry, "upserts")
	if err := errors.Join(err1, err2); err != nil {
		return calls.ConvertTableResult{}, nonRetryable(payload.ErrBadInput, err)
	}
	var upDigest digest.Digest
	var upErr error
	pdDigest, err := b.WriteFile(pdRel, func(pw io.Writer) error {
		upDigest, upErr = b.WriteFile(upRel, func(uw io.Writer) error {
			tf := fold.TableFile{Path: prev.Path(mt.File), SHA256: prev.Manifest.Files[mt.File].SHA256}
			_, err := job.eng.WritePair(ctx, w, tf, job.meta, pw, uw, job.progress)
			return err
		})
		return upErr
	})
	if upErr != nil {
		// Already "build snapshot <id>: write <upserts>: …"; the posdel
		// file's wrap would say the snapshot again.
		return calls.ConvertTableResult{}, upErr
	}
	if err != nil {
		return calls.ConvertTableResult{}, err
	}
	out.Chain = append(out.Chain, calls.ChainFile{Path: pdRel, SHA256: pdDigest.SHA256, Size: pdDigest.Size},
		calls.ChainFile{Path: upRel, SHA256: upDigest.SHA256, Size: upDigest.Size})
	return out, nil
}

// rewriteTable folds the previous table file, its chain and the window into
// a new table file, then writes the empty chain start.
func (a *Activities) rewriteTable(ctx context.Context, in calls.RefreshTableInput, prev *snapshot.Snapshot, mt snapshot.ManifestTable,
	b *snapshot.Builder, job *foldJob) (calls.ConvertTableResult, error) {
	tp := in.Table
	// The table at the cut, through the moment seam: the previous
	// snapshot's files (every sha256 checked first) and the window.
	tw := moment.TablePlan{Schema: mt.Schema, Table: mt.Table, Snapshot: in.Prev, After: in.PrevSeq, Upto: in.Cut.Seq}
	if tp.Changes == 0 {
		tw.Upto = tw.After
	}
	// The previous snapshot is in job.dir (DownloadCurrent brought it
	// when it was not; a shared table fetched its files).
	rb := moment.Rebuilder{Source: in.Source, Engine: job.eng, Events: a.events(ctx, in.Source), Catalog: moment.LocalCatalog{SourceDir: job.dir}}
	t, err := rb.Open(ctx, tw, job.progress)
	if err != nil {
		return calls.ConvertTableResult{}, momentErr(err)
	}
	defer t.Close()
	def := t.Footer.Table
	var res snapshot.WriteResult
	digest, err := b.WriteFile(mt.File, func(w io.Writer) error {
		var err error
		res, err = t.Write(ctx, job.meta, w, job.progress)
		return err
	})
	if err != nil {
		return calls.ConvertTableResult{}, err
	}
	out := calls.ConvertTableResult{Schema: mt.Schema, Table: mt.Table, File: mt.File, Rows: res.Rows,
		Fingerprint: res.Fingerprint.String(), SHA256: digest.SHA256, Size: digest.Size,
		Kind: tp.Kind, Origin: snapshot.OriginRewritten}
	if err := addEmptyChain(b, def, &out); err != nil {
		return calls.ConvertTableResult{}, err
	}
	return out, nil
}

// tableMeta returns the table's definition (from its table file's footer)
// and the footer of files the refresh writes for it. It reads the footer
// only: a pair reuses the manifest's digest of the table file (its size is
// checked by Builder.Link, its key map is built from a digest-checked read),
// and a rewrite checks every file before it reads them (fold.SnapshotTable).
func tableMeta(prev *snapshot.Snapshot, mt snapshot.ManifestTable, in calls.RefreshTableInput) (*schema.Table, snapshot.FooterMeta, error) {
	f, err := snapshot.ReadFooter(prev.Path(mt.File))
	if err != nil {
		return nil, snapshot.FooterMeta{}, nonRetryable(payload.ErrBrokenSnapshot, err)
	}
	create := f.CreateTable
	if mt.CreateTable != "" {
		create = mt.CreateTable
	}
	if in.CreateTable != "" {
		create = in.CreateTable
	}
	meta := snapshot.FooterMeta{CreateTable: create, SnapshotID: in.SnapshotID, Source: in.Source,
		Position: in.Cut}
	return f.Table, meta, nil
}

// windowEvents reads the table's changes in the window (PrevSeq, Cut.Seq]
// from the moment seam's events source.
func (a *Activities) windowEvents(ctx context.Context, in calls.RefreshTableInput, def *schema.Table) fold.Events {
	return func(fn func(change.Event) error) error {
		return a.events(ctx, in.Source).TableEvents(ctx, in.Source, def.Schema, def.Name, in.PrevSeq, in.Cut.Seq, fn)
	}
}

// windowErr marks an event that cannot be folded (a malformed image, an
// image of another shape) as bad input: a retry reads the same event.
func windowErr(err error) error {
	var row *snapshot.RowError
	if errors.As(err, &row) || fold.IsBadEvent(err) {
		return nonRetryable(payload.ErrBadInput, err)
	}
	return err
}

// scratchName names a refresh's scratch window file: unique per snapshot
// and table, so engines shared between activities never mix them.
func scratchName(in calls.RefreshTableInput) string {
	return "window-" + in.SnapshotID + "-" + in.Table.Key.Schema + "." + in.Table.Key.Table
}
