package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/compaction"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/payload"
)

// CompactTable merges the chain entries in.Merge names (the first entries of
// the table's chain in snapshot in.SnapshotID, as the refresh's plan chose
// them) into one range pair under .compact/ (every dead row number;
// the newest version of every key, delete markers kept), then writes the
// range's descriptor. The snapshot and its table file are not touched; the
// next refresh links the range in place of the entries it merged, if they
// are still the chain's first. A range already written for the same files is
// kept (idempotent); fewer than two entries to merge are left as they are.
// First the folder's free space is checked against the merged files' size
// (the range holds at most what it merges): too little is NoRoom. A
// Merge that is not the start of the snapshot's chain is refused: the plan
// and the snapshot disagree.
func (a *Activities) CompactTable(ctx context.Context, in calls.CompactTableInput) (calls.CompactTableResult, error) {
	dir := a.sourceDir(in.Source)
	k := foldplan.TableKey{Schema: in.Schema, Table: in.Table}
	snap, err := snapshot.OpenSnapshot(snapshotDir(dir, in.SnapshotID))
	if err != nil {
		return calls.CompactTableResult{}, nonRetryable(payload.ErrSnapshotGone, err)
	}
	mt, ok := snap.Manifest.Table(in.Schema, in.Table)
	if !ok {
		return calls.CompactTableResult{}, nil // nothing to merge
	}
	cr, ok, err := compaction.Range(snap.Manifest, mt, in.Merge)
	switch {
	case errors.Is(err, compaction.ErrNotChainStart):
		return calls.CompactTableResult{}, nonRetryable(payload.ErrBadPlan, fmt.Errorf("snapshot %s: %w", in.SnapshotID, err))
	case err != nil:
		return calls.CompactTableResult{}, nonRetryable(payload.ErrBrokenSnapshot, fmt.Errorf("snapshot %s: %w", in.SnapshotID, err))
	case !ok:
		return calls.CompactTableResult{}, nil // nothing to merge: fewer than two entries
	}
	merge := in.Merge
	var posdel []string
	var upserts []fold.Keyed
	for i, rel := range merge {
		if err := snap.Verify(rel); err != nil {
			return calls.CompactTableResult{}, nonRetryable(payload.ErrBrokenSnapshot, err)
		}
		if i%2 == 0 {
			posdel = append(posdel, snap.Path(rel))
		} else {
			upserts = append(upserts, fold.Upserts(snap.Path(rel)))
		}
	}
	name := foldplan.Entry(cr.From, cr.To)
	res := calls.CompactTableResult{Range: name, MergedFiles: len(merge)}
	old, err := compaction.Read(snapshot.Folder(dir), k)
	if err == nil && compaction.Same(old, cr) {
		return res, nil
	}
	// The range holds at most what it merges.
	est := spaceneed.Exact(snap.Manifest.FilesSize(merge...))
	if err := a.checkSpace(dir, est, "compact "+k.String()); err != nil {
		return calls.CompactTableResult{}, err
	}
	if res, err = a.writeRange(ctx, in, snap, mt, cr, posdel, upserts, res, est); err != nil {
		return res, err
	}
	// A range the new one replaces, under other names, is no longer used.
	for _, rel := range []string{old.Posdel, old.Upserts} {
		if rel != cr.Posdel && rel != cr.Upserts {
			compaction.RemoveFiles(snapshot.Folder(dir), rel)
		}
	}
	return res, nil
}

// writeRange writes the range pair and, last, its descriptor.
func (a *Activities) writeRange(ctx context.Context, in calls.CompactTableInput, snap *snapshot.Snapshot, mt snapshot.ManifestTable,
	cr foldplan.CompactedRange, posdel []string, upserts []fold.Keyed, res calls.CompactTableResult, est spaceneed.Estimate) (calls.CompactTableResult, error) {
	dir := a.sourceDir(in.Source)
	k := foldplan.TableKey{Schema: in.Schema, Table: in.Table}
	foot, err := snapshot.ReadFooter(snap.Path(mt.File))
	if err != nil {
		return calls.CompactTableResult{}, nonRetryable(payload.ErrBrokenSnapshot, err)
	}
	eng, release, err := a.engine(ctx)
	if err != nil {
		return calls.CompactTableResult{}, err
	}
	failed := true
	defer func() { release(failed) }()
	pdRel, err1 := snapshot.ChainFile(in.Schema, in.Table, res.Range, "posdel")
	upRel, err2 := snapshot.ChainFile(in.Schema, in.Table, res.Range, "upserts")
	if err := errors.Join(err1, err2); err != nil {
		return calls.CompactTableResult{}, nonRetryable(payload.ErrBadInput, err)
	}
	meta := snapshot.FooterMeta{CreateTable: foot.CreateTable, Position: foot.Position, SnapshotID: in.SnapshotID, Source: in.Source}
	set, stop := keepAlive(ctx)
	defer stop()
	progress := func(stage string, rows int64) {
		set(payload.RefreshTableProgress{Table: k.String(), Stage: stage, Rows: rows})
	}
	base := snapshot.Folder(dir).Compact()
	if err := compaction.Forget(snapshot.Folder(dir), k); err != nil {
		return calls.CompactTableResult{}, err
	}
	pdPath, upPath := filepath.Join(base, filepath.FromSlash(pdRel)), filepath.Join(base, filepath.FromSlash(upRel))
	for _, d := range []string{filepath.Dir(pdPath), filepath.Dir(upPath)} {
		if err := os.MkdirAll(d, filemode.Dir()); err != nil {
			return calls.CompactTableResult{}, err
		}
	}
	var cres fold.CompactResult
	cr.PosdelDigest, err = atomicfile.WriteHashed(pdPath, filemode.File(), func(pw io.Writer) error {
		var err error
		cr.UpsertsDigest, err = atomicfile.WriteHashed(upPath, filemode.File(), func(uw io.Writer) error {
			var err error
			cres, err = eng.Compact(ctx, foot.Table, posdel, upserts, meta, pw, uw, progress)
			return err
		})
		return err
	})
	if err != nil {
		return calls.CompactTableResult{}, err
	}
	cr.Posdel, cr.Upserts = pdRel, upRel
	if err := compaction.Write(snapshot.Folder(dir), k, cr); err != nil {
		return calls.CompactTableResult{}, err
	}
	res.PosdelRows, res.UpsertRows = cres.PosdelRows, cres.UpsertRows
	res.Space = spaceneed.Record(spaceneed.KindCompact, est, uint64(max(cr.PosdelDigest.Size, 0)+max(cr.UpsertsDigest.Size, 0)))
	failed = false
	return res, nil
}

// Prune applies local retention with the worker's policy (retention.Make
// over the local folder with Activities.Retention: the newest
// KeepSnapshots, those of the last KeepDays days, the kept window's base,
// the current one and newer, nothing while a job reads the source) and
// removes the .compact/ ranges of in.DropCompacted. With a remote store, a
// snapshot whose remote copy is not confirmed (no valid .remote/<id>.ok
// marker) is kept whatever its age. A policy whose KeepSnapshots is 0 or
// less removes no snapshot.
func (a *Activities) Prune(ctx context.Context, in calls.PruneInput) (calls.PruneResult, error) {
	_, stop := keepAlive(ctx)
	defer stop()
	dir := a.sourceDir(in.Source)
	for _, k := range in.DropCompacted {
		if err := compaction.Drop(snapshot.Folder(dir), k); err != nil {
			return calls.PruneResult{}, err
		}
	}
	if a.Retention.KeepSnapshots <= 0 {
		return calls.PruneResult{}, nil
	}
	return a.pruneLocal(ctx, in.Source)
}

// pruneLocal removes the local snapshots of source that retention under
// the worker's policy removes (retention.Make over the local folder; see
// Prune), then the key maps no table file uses any more.
func (a *Activities) pruneLocal(ctx context.Context, source string) (calls.PruneResult, error) {
	if err := a.Retention.Validate(); err != nil {
		return calls.PruneResult{}, nonRetryable(payload.ErrBadInput, fmt.Errorf("the worker's retention policy: %w", err))
	}
	res, err := a.pruneDecided(ctx, source)
	if err != nil {
		return res, err
	}
	if err := a.pruneKeyMaps(); err != nil {
		a.log(ctx).Warn("key maps not pruned", "error", err)
	}
	return res, nil
}

// pruneDecided lists source's folder and decides under the publish lock,
// and hands snapshot.Prune the ids retention removes.
func (a *Activities) pruneDecided(ctx context.Context, source string) (calls.PruneResult, error) {
	dir := a.sourceDir(source)
	rin, err := a.retentionInput(ctx, source, a.Retention, time.Now().UTC(), false)
	if err != nil {
		return calls.PruneResult{}, fmt.Errorf("prune %s: %w", source, err)
	}
	unlock, err := snapshot.LockPublish(ctx, dir)
	if err != nil {
		return calls.PruneResult{}, err
	}
	defer unlock()
	local, err := localPlace(dir)
	if err != nil {
		return calls.PruneResult{}, fmt.Errorf("prune %s: %w", source, err)
	}
	local.Held = rin.Places[0].Held
	rin.Places = []retention.Place{local}
	remove, held := localDecision(retention.Make(rin))
	for _, id := range held {
		a.log(ctx).Info("snapshot kept: held", "source", source, "snapshot", id, "reason", heldReason)
	}
	res, err := snapshot.Prune(dir, remove, a.log(ctx))
	return calls.PruneResult{Removed: res.Removed, Held: held}, err
}

// remoteHold returns what retention needs from the remote store: held
// reports a snapshot whose remote copy is not confirmed (an unreadable
// marker holds too), forget drops a removed snapshot's marker. Without a
// remote store nothing is held.
func (a *Activities) remoteHold(ctx context.Context, source string) (held func(string) bool, forget func(string), err error) {
	if a.Remote == nil {
		return nil, func(string) {}, nil
	}
	m, err := a.mirror(ctx, source)
	if err != nil {
		return nil, nil, err
	}
	log := a.log(ctx)
	held = func(id string) bool {
		ok, err := m.Confirmed(id)
		if err != nil {
			log.Warn("remote confirmation unreadable; snapshot kept", "snapshot", id, "error", err)
		}
		return !ok
	}
	forget = func(id string) {
		if err := m.Forget(id); err != nil {
			log.Warn("confirmation marker not removed", "snapshot", id, "error", err)
		}
	}
	return held, forget, nil
}

// pruneKeyMaps removes the cached key maps of table files no published
// snapshot of any source in the backup folder still holds.
func (a *Activities) pruneKeyMaps() error {
	maps, err := os.ReadDir(a.keyMapDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	used, err := a.tableFileDigests()
	if err != nil {
		return err
	}
	for _, m := range maps {
		sum, ok := strings.CutSuffix(m.Name(), ".keys")
		if ok && !used[sum] {
			os.Remove(filepath.Join(a.keyMapDir(), m.Name()))
		}
	}
	return nil
}

// tableFileDigests returns the sha256 of every table file of every published
// snapshot in the backup folder.
func (a *Activities) tableFileDigests() (map[string]bool, error) {
	used := map[string]bool{}
	sources, err := os.ReadDir(a.BackupDir)
	if err != nil {
		return nil, err
	}
	for _, src := range sources {
		if !src.IsDir() {
			continue
		}
		dir := filepath.Join(a.BackupDir, src.Name())
		ids, err := snapshot.ListSnapshots(dir)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			snap, err := snapshot.OpenSnapshot(snapshotDir(dir, id))
			if err != nil {
				return nil, err
			}
			for _, t := range snap.Manifest.Tables {
				used[snap.Manifest.Files[t.File].SHA256] = true
			}
		}
	}
	return used, nil
}
