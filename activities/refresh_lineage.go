package activities

import (
	"context"
	"fmt"
	"io"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/payload"
)

// foldsLineage reports whether a table's plan starts from something other
// than its own files in the previous snapshot: a lineage of schema changes
// (renamed, reshaped, emptied, created) or a partial re-dump.
func foldsLineage(tp foldplan.TablePlan) bool {
	from, ok := tp.From()
	return tp.Action == foldplan.ActionRewrite && (tp.Lineage != nil || tp.Base != "" || !ok || from != tp.Key)
}

// refreshLineage rewrites a table through its lineage (foldsLineage): the
// moment seam rebuilds it at the cut from its base (the previous snapshot
// under its base name, a partial snapshot that re-dumped it, or nothing
// for a table created in the window), folding the window's events and
// applying every schema change on the way; the new table file is written
// under its name at the cut with an empty chain start. The source is not
// read.
func (a *Activities) refreshLineage(ctx context.Context, in calls.RefreshTableInput) (calls.ConvertTableResult, error) {
	tp := in.Table
	dir := a.sourceDir(in.Source)
	what := string(tp.Action) + " " + tp.Key.String()
	if err := a.checkSpaceOrRetain(ctx, in.Source, dir, a.lineageNeed(dir, in), what); err != nil {
		return calls.ConvertTableResult{}, err
	}
	out, err := a.rewriteLineage(ctx, in, dir)
	if err != nil {
		return calls.ConvertTableResult{}, noSpace(err, dir, what)
	}
	return out, nil
}

// lineageNeed estimates a lineage rewrite from its base table's files, as
// a rewrite of that table; a created table, from the floor.
func (a *Activities) lineageNeed(dir string, in calls.RefreshTableInput) spaceneed.Estimate {
	tp := in.Table
	from, ok := tp.From()
	id := in.Prev
	if tp.Base != "" {
		id = tp.Base
	}
	if ok {
		open := func() (*snapshot.Snapshot, error) { return snapshot.OpenSnapshot(snapshotDir(dir, id)) }
		if tp.Base != "" {
			open = func() (*snapshot.Snapshot, error) { return snapshot.OpenPartial(dir, id) }
		}
		if snap, err := open(); err == nil {
			if mt, found := snap.Manifest.Table(from.Schema, from.Table); found {
				return spaceneed.Rewrite(snapshot.MeasureTable(&snap.Manifest, mt, snap.Path), tp.Changes)
			}
		}
	}
	return spaceneed.Rewrite(spaceneed.Table{}, tp.Changes)
}

func (a *Activities) rewriteLineage(ctx context.Context, in calls.RefreshTableInput, dir string) (calls.ConvertTableResult, error) {
	tp := in.Table
	b, progress, stop, err := stageTable(ctx, dir, in)
	if err != nil {
		return calls.ConvertTableResult{}, err
	}
	defer stop()
	eng, release, err := a.engine(ctx)
	if err != nil {
		return calls.ConvertTableResult{}, err
	}
	mp := moment.TablePlan{Schema: tp.Key.Schema, Table: tp.Key.Table, Snapshot: in.Prev, After: in.PrevSeq, Upto: in.Cut.Seq, Lineage: tp.Lineage}
	if tp.Base != "" {
		mp.Snapshot, mp.After = tp.Base, tp.BaseSeq
	}
	rb := moment.Rebuilder{Source: in.Source, Engine: eng, Events: a.events(ctx, in.Source), Catalog: moment.LocalCatalog{SourceDir: dir}}
	out, err := a.writeRebuilt(ctx, rb, mp, in, b, progress)
	release(err != nil)
	return out, err
}

// writeRebuilt opens mp through rb and writes it as the table's new table
// file and empty chain start into the builder b.
func (a *Activities) writeRebuilt(ctx context.Context, rb moment.Rebuilder, mp moment.TablePlan, in calls.RefreshTableInput,
	b *snapshot.Builder, progress fold.Progress) (calls.ConvertTableResult, error) {
	tp := in.Table
	t, err := rb.Open(ctx, mp, progress)
	if err != nil {
		return calls.ConvertTableResult{}, momentErr(err)
	}
	defer t.Close()
	if tp.Base != "" && tp.Lineage == nil && t.Events == 0 {
		// Re-dumped, and nothing happened to it since: its files are the
		// table at the cut, as a table with no change is linked forward.
		return linkRedumped(a.sourceDir(in.Source), in, b)
	}
	def := t.Footer.Table
	if def == nil || def.Schema != tp.Key.Schema || def.Name != tp.Key.Table {
		return calls.ConvertTableResult{}, nonRetryable(payload.ErrBadPlan, fmt.Errorf("refresh %s: the rebuilt table is named %s", tp.Key, def.QualifiedName()))
	}
	rel, err := snapshot.TableFile(tp.Key.Schema, tp.Key.Table)
	if err != nil {
		return calls.ConvertTableResult{}, nonRetryable(payload.ErrBadInput, err)
	}
	create := t.Footer.CreateTable
	if in.CreateTable != "" {
		create = in.CreateTable
	}
	meta := snapshot.FooterMeta{CreateTable: create, SnapshotID: in.SnapshotID, Source: in.Source, Position: in.Cut}
	var res snapshot.WriteResult
	d, err := b.WriteFile(rel, func(w io.Writer) error {
		var err error
		res, err = t.Write(ctx, meta, w, progress)
		return err
	})
	if err != nil {
		return calls.ConvertTableResult{}, err
	}
	out := calls.ConvertTableResult{Schema: tp.Key.Schema, Table: tp.Key.Table, File: rel, Rows: res.Rows,
		Fingerprint: res.Fingerprint.String(), SHA256: d.SHA256, Size: d.Size, Kind: tp.Kind, Origin: snapshot.OriginRewritten}
	if err := addEmptyChain(b, def, &out); err != nil {
		return calls.ConvertTableResult{}, err
	}
	return out, nil
}

// linkRedumped links the files of tp's partial re-dump (its table file
// and empty chain start) into the staged snapshot as the table at the
// cut: the window from the dump's position to the cut holds no change of
// it and no schema change. The result is the partial manifest's entry.
func linkRedumped(dir string, in calls.RefreshTableInput, b *snapshot.Builder) (calls.ConvertTableResult, error) {
	tp := in.Table
	snap, err := snapshot.OpenPartial(dir, tp.Base)
	if err != nil {
		return calls.ConvertTableResult{}, nonRetryable(payload.ErrBrokenSnapshot, fmt.Errorf("refresh %s: partial snapshot %s: %w", tp.Key, tp.Base, err))
	}
	mt, ok := snap.Manifest.Table(tp.Key.Schema, tp.Key.Table)
	if !ok {
		return calls.ConvertTableResult{}, nonRetryable(payload.ErrBrokenSnapshot, fmt.Errorf("refresh %s: not in partial snapshot %s", tp.Key, tp.Base))
	}
	out := calls.ConvertTableResult{Schema: mt.Schema, Table: mt.Table, File: mt.File, Rows: mt.Rows, Fingerprint: mt.Fingerprint.String(),
		Kind: tp.Kind, Origin: snapshot.OriginDump, CreateTable: mt.CreateTable}
	if in.CreateTable != "" {
		out.CreateTable = in.CreateTable
	}
	for i, rel := range append([]string{mt.File}, mt.Chain...) {
		d, ok := snap.Manifest.Files[rel]
		if !ok {
			return calls.ConvertTableResult{}, nonRetryable(payload.ErrBrokenSnapshot, fmt.Errorf("refresh %s: partial snapshot %s lists no %s", tp.Key, tp.Base, rel))
		}
		dg := digest.Digest(d)
		if err := b.Link(rel, snap.Path(rel), dg); err != nil {
			return calls.ConvertTableResult{}, err
		}
		if i == 0 {
			out.SHA256, out.Size = dg.SHA256, dg.Size
			continue
		}
		out.Chain = append(out.Chain, calls.ChainFile{Path: rel, SHA256: dg.SHA256, Size: dg.Size})
	}
	return out, nil
}
