package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// Retention (docs/retention.md) lists every place a source's data lives,
// computes retention.Make's plan and removes what it says. What running
// jobs read comes from Temporal (Activities.Jobs): while a job that reads
// the source's snapshots or archives runs, nothing is removed.

// JobLister lists the open workflow runs that read a source's snapshots or
// archives (the worker's Temporal client: temporalclient.Runs).
type JobLister interface {
	// Readers returns "<workflow type> <workflow id>" of each open run of
	// a reading workflow type whose source is source or not recorded.
	Readers(ctx context.Context, source string) ([]string, error)
}

// PlanRetention lists the source's snapshots (local folder and object
// store), its archived hours and the jobs reading it, resolves the kept
// window's start to a cut, and returns retention.Make's plan. It removes
// nothing.
func (a *Activities) PlanRetention(ctx context.Context, in RetentionInput) (retention.Plan, error) {
	if err := in.Policy.Validate(); err != nil {
		return retention.Plan{}, nonRetryable(ErrBadInput, err)
	}
	rin, err := a.retentionInput(ctx, in.Source, in.Policy, time.Now().UTC(), true)
	if err != nil {
		return retention.Plan{}, fmt.Errorf("plan retention of %s: %w", in.Source, err)
	}
	return retention.Make(rin), nil
}

// retentionInput gathers what retention.Make needs at now; the store's
// snapshots and the archived hours only withStore (the local folder's
// plan does not depend on them: places are planned apart).
func (a *Activities) retentionInput(ctx context.Context, source string, p retention.Policy, now time.Time, withStore bool) (retention.Input, error) {
	in := retention.Input{Now: now, Policy: p}
	local, err := snapshot.LocalPlace(a.sourceDir(source))
	if err != nil {
		return in, fmt.Errorf("local snapshots: %w", err)
	}
	held, _, err := a.remoteHold(ctx, source)
	if err != nil {
		return in, err
	}
	if held != nil {
		local.Held = map[string]string{}
		for _, s := range local.Snapshots {
			if held(s.ID) {
				local.Held[s.ID] = snapshot.HeldReason
			}
		}
	}
	in.Places = append(in.Places, local)
	if a.Remote != nil && withStore {
		rp, err := a.remotePlace(ctx, source)
		if err != nil {
			return in, err
		}
		in.Places = append(in.Places, rp)
		if in.Archives, err = a.archivedHours(ctx, source); err != nil {
			return in, err
		}
	}
	if start, ok := p.WindowStart(now); ok {
		if in.WindowCut, err = a.windowCut(ctx, source, start); err != nil {
			return in, err
		}
	}
	if a.Jobs != nil {
		if in.Readers, err = a.Jobs.Readers(ctx, source); err != nil {
			return in, fmt.Errorf("running jobs of %s: %w", source, err)
		}
	}
	return in, nil
}

// remotePlace lists the source's complete snapshots on the store with the
// seq of each (its manifest) and the store's current pointer.
func (a *Activities) remotePlace(ctx context.Context, source string) (retention.Place, error) {
	m, err := a.mirror(ctx, source)
	if err != nil {
		return retention.Place{}, err
	}
	pl := retention.Place{Name: retention.PlaceRemote}
	if pl.Current, err = m.Current(ctx); err != nil {
		return pl, fmt.Errorf("remote current of %s: %w", source, err)
	}
	ids, err := m.List(ctx)
	if err != nil {
		return pl, err
	}
	for _, id := range ids {
		man, _, err := m.ReadManifest(ctx, id)
		if err != nil {
			return pl, fmt.Errorf("remote snapshot %s: %w", id, err)
		}
		made, _ := snapshot.ParseSnapshotID(id)
		pl.Snapshots = append(pl.Snapshots, retention.Snapshot{ID: id, Made: made, Seq: man.Position.Seq})
	}
	return pl, nil
}

// archivedHours is the index's record of the source's archived hours.
func (a *Activities) archivedHours(ctx context.Context, source string) ([]retention.Hour, error) {
	recs, err := a.Index.Archives(ctx, source)
	if err != nil {
		return nil, err
	}
	out := make([]retention.Hour, len(recs))
	for i, r := range recs {
		out[i] = retention.Hour{Name: r.Object, Start: change.HourTime(r.Hour), FirstSeq: r.FirstSeq, LastSeq: r.LastSeq,
			Confirmed: r.Confirmed(), Dropped: !r.DroppedAt.IsZero()}
	}
	return out, nil
}

// windowCut is the seq of the last transaction committed at or before
// start, over the index and the archived hours (moment.Resolve). A start
// after the newest capture is cut at the checkpoint; one that cannot be
// cut (before every captured transaction, inside a gap, an archived hour
// unreadable) is 0: the oldest snapshot is then the window's base, which
// keeps more, never less.
func (a *Activities) windowCut(ctx context.Context, source string, start time.Time) (uint64, error) {
	past := moment.Past{Source: source, Index: a.Index, SourceDir: a.sourceDir(source), Archive: a.Remote, Log: a.log(ctx)}
	lk := past.Lookup()
	f, err := moment.ReadFacts(ctx, lk, source)
	if err != nil {
		return 0, err
	}
	cut, err := moment.Resolve(ctx, lk, f, moment.At{Kind: moment.KindTime, Time: start}, false)
	if r, ok := moment.IsRefused(err); ok {
		if r.Code == moment.CodeNotCaptured && f.Captured {
			return f.Checkpoint.LastSeq, nil
		}
		a.log(ctx).Info("kept window's start not cut; the oldest snapshot is its base", "source", source, "start", start, "reason", r.Error())
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return cut.Seq, nil
}

// ApplyRetention removes what in.Plan removes, place by place: local
// snapshots (under the source folder's publish lock, crash-safely), remote
// snapshots (manifest first, so the store stops listing it as complete,
// then its files), then archived hours (the file, then the index's record)
// except those after a snapshot that could not be removed
// (retention.Plan.HoursAfter: it stays a base, so its hours stay). It
// first asks again which jobs read the source: if one started since the
// plan, nothing is removed. A delete Object Lock refuses is reported in
// Locked and logged, not fatal; any other failure of one item is reported
// in Failed and the run goes on.
func (a *Activities) ApplyRetention(ctx context.Context, in ApplyRetentionInput) (RetentionResult, error) {
	_, stop := keepAlive(ctx)
	defer stop()
	res := RetentionResult{Plan: in.Plan}
	if a.Jobs != nil {
		readers, err := a.Jobs.Readers(ctx, in.Source)
		if err != nil {
			return res, fmt.Errorf("running jobs of %s: %w", in.Source, err)
		}
		if len(readers) > 0 {
			res.Skipped = "a job that reads the source started since the plan: " + strings.Join(readers, ", ")
			return res, nil
		}
	}
	log := a.log(ctx)
	var local, rem []retention.Item
	for _, it := range in.Plan.Removals() {
		switch it.Place {
		case retention.PlaceLocal:
			local = append(local, it)
		case retention.PlaceRemote:
			rem = append(rem, it)
		}
	}
	if err := a.removeLocal(ctx, in.Source, local, &res, log); err != nil {
		return res, err
	}
	if len(in.Plan.Removals()) > len(local) && a.Remote == nil {
		return res, nonRetryable(ErrNoArchiveLocation, errors.New("the plan removes from the store and this worker has no archive location (--archive-url)"))
	}
	for _, it := range rem {
		a.removeRemote(ctx, in.Source, it, &res)
	}
	// A snapshot left in place stays a base: the hours after it stay too.
	left := map[string]bool{}
	for _, f := range append(slices.Clone(res.Locked), res.Failed...) {
		left[f.Place+"/"+f.ID] = true
	}
	arch, held := in.Plan.HoursAfter(left)
	res.Held = held
	for _, it := range arch {
		a.removeArchive(ctx, in.Source, it, &res)
	}
	for _, l := range res.Locked {
		log.Warn("retention: delete refused by Object Lock", "source", in.Source, "place", l.Place, "id", l.ID, "error", l.Error)
	}
	for _, l := range res.Failed {
		log.Warn("retention: delete failed", "source", in.Source, "place", l.Place, "id", l.ID, "error", l.Error)
	}
	return res, nil
}

// removeLocal removes the local snapshots of items under the publish lock.
func (a *Activities) removeLocal(ctx context.Context, source string, items []retention.Item, res *RetentionResult, log *slog.Logger) error {
	if len(items) == 0 {
		return nil
	}
	dir := a.sourceDir(source)
	unlock, err := snapshot.LockPublish(ctx, dir)
	if err != nil {
		return err
	}
	defer unlock()
	for _, it := range items {
		if err := snapshot.RemoveSnapshot(dir, it.ID); err != nil {
			res.Failed = append(res.Failed, Refused{Place: it.Place, ID: it.ID, Error: err.Error()})
			continue
		}
		res.Removed = append(res.Removed, it)
	}
	if err := a.pruneKeyMaps(); err != nil {
		log.Warn("key maps not pruned", "error", err)
	}
	return nil
}

// removeRemote deletes a remote snapshot: its manifest first (the store then
// no longer lists it as a complete snapshot), then every other object under
// <source>/snapshots/<id>/. A locked manifest leaves the snapshot whole and
// listed; a locked file after it is reported with the names left.
func (a *Activities) removeRemote(ctx context.Context, source string, it retention.Item, res *RetentionResult) {
	m, err := remote.New(a.Remote, source, a.sourceDir(source), nil)
	if err != nil {
		res.Failed = append(res.Failed, Refused{Place: it.Place, ID: it.ID, Error: err.Error()})
		return
	}
	if err := a.Remote.Delete(ctx, m.SnapshotName(it.ID, snapshot.ManifestName)); err != nil {
		res.refuse(it, err)
		return
	}
	var names []string
	prefix := m.SnapshotName(it.ID, "") + "/"
	if err := a.Remote.List(ctx, prefix, func(info storage.Info) error {
		names = append(names, info.Name)
		return nil
	}); err != nil {
		res.Failed = append(res.Failed, Refused{Place: it.Place, ID: it.ID, Error: fmt.Sprintf("manifest deleted; list its files: %v", err)})
		return
	}
	var left []string
	var firstErr error
	for _, name := range names {
		if err := a.Remote.Delete(ctx, name); err != nil {
			left = append(left, path.Base(name))
			firstErr = cmpErr(firstErr, err)
		}
	}
	if firstErr != nil {
		res.refuse(it, fmt.Errorf("manifest deleted, %d of %d files left (%s): %w", len(left), len(names), strings.Join(left, ", "), firstErr))
		return
	}
	res.Removed = append(res.Removed, it)
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// removeArchive deletes an archived hour's file, then the index's record
// of it; a locked file keeps its record (readers still find it whole).
func (a *Activities) removeArchive(ctx context.Context, source string, it retention.Item, res *RetentionResult) {
	if err := a.Remote.Delete(ctx, it.ID); err != nil {
		res.refuse(it, err)
		return
	}
	if err := a.Index.ForgetArchive(ctx, source, change.HourID(it.Time)); err != nil {
		res.Failed = append(res.Failed, Refused{Place: it.Place, ID: it.ID, Error: err.Error()})
		return
	}
	res.Removed = append(res.Removed, it)
}

// refuse records a failed delete: in Locked when Object Lock refused it.
func (r *RetentionResult) refuse(it retention.Item, err error) {
	f := Refused{Place: it.Place, ID: it.ID, Error: err.Error()}
	if errors.Is(err, storage.ErrLocked) {
		r.Locked = append(r.Locked, f)
		return
	}
	r.Failed = append(r.Failed, f)
}
