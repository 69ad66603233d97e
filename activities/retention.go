package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/when"
	"github.com/dbtrail/dbtrail/payload"
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
// window's start to a cut, and returns retention.Make's plan under the
// worker's policy (Activities.Retention; the plan records it). It removes
// nothing.
func (a *Activities) PlanRetention(ctx context.Context, in calls.RetentionInput) (retention.Plan, error) {
	if err := a.Retention.Validate(); err != nil {
		return retention.Plan{}, nonRetryable(payload.ErrBadInput, fmt.Errorf("the worker's retention policy: %w", err))
	}
	rin, err := a.retentionInput(ctx, in.Source, a.Retention, time.Now().UTC(), true)
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
	local, err := localPlace(a.sourceDir(source))
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
				local.Held[s.ID] = heldReason
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

// heldReason is why a local snapshot whose remote copy is not confirmed
// is kept (retention.Place.Held).
const heldReason = "held: its remote copy is not confirmed"

// localPlace is the published snapshots of the source folder dir as
// retention's local place (snapshot.List).
func localPlace(dir string) (retention.Place, error) {
	l, err := snapshot.List(dir)
	if err != nil {
		return retention.Place{}, err
	}
	pl := retention.Place{Name: retention.PlaceLocal, Current: l.Current}
	for _, s := range l.Snapshots {
		pl.Snapshots = append(pl.Snapshots, retention.Snapshot{ID: s.ID, Made: s.Made, Seq: s.Seq})
	}
	return pl, nil
}

// localDecision splits plan's local snapshots into the ids it removes and
// the ids kept only because their remote copy is not confirmed (held).
func localDecision(plan retention.Plan) (remove, held []string) {
	for _, it := range plan.Items {
		switch {
		case it.Place != retention.PlaceLocal:
		case !it.Keep:
			remove = append(remove, it.ID)
		case it.Reason == heldReason:
			held = append(held, it.ID)
		}
	}
	return remove, held
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
	cut, err := moment.Resolve(ctx, lk, f, when.At{Kind: when.KindTime, Time: start}, false)
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
// then its files under its name), the content objects no remote manifest
// refers to any more (past their grace period), then archived hours (the file, then the index's record)
// except those after a snapshot that could not be removed
// (retention.Plan.HoursAfter: it stays a base, so its hours stay); then
// the partial snapshots older than snapshot.PartialMaxAge (a partial full
// backup's that the refresh which asked for it did not remove: it failed).
// It first asks again which jobs read the source: if one started since the
// plan, nothing is removed. A delete Object Lock refuses is reported in
// Locked and logged, not fatal; any other failure of one item is reported
// in Failed and the run goes on.
func (a *Activities) ApplyRetention(ctx context.Context, in calls.ApplyRetentionInput) (calls.RetentionResult, error) {
	_, stop := keepAlive(ctx)
	defer stop()
	res := calls.RetentionResult{Plan: in.Plan}
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
	rm := retentionRemover{a: a, source: in.Source, log: log}
	var store retention.StoreRemover
	if a.Remote != nil {
		store = rm
	}
	out, err := retention.Apply(ctx, in.Plan, rm, store)
	res.Removed, res.Locked, res.Failed, res.Held = out.Removed, out.Locked, out.Failed, out.Held
	if errors.Is(err, retention.ErrNoStore) {
		return res, nonRetryable(payload.ErrNoArchiveLocation, errors.New("the plan removes from the store and this worker has no archive location (--archive-url)"))
	}
	if err != nil {
		return res, err
	}
	res.PartialsRemoved, err = snapshot.RemoveStalePartials(a.sourceDir(in.Source), time.Now(), snapshot.PartialMaxAge)
	for _, id := range res.PartialsRemoved {
		log.Info("retention: stale partial snapshot removed", "source", in.Source, "snapshot", id)
	}
	if err != nil {
		res.Failed = append(res.Failed, retention.Refused{Place: retention.PlaceLocal, ID: snapshot.PartialDir, Error: err.Error()})
	}
	for _, l := range res.Locked {
		log.Warn("retention: delete refused by Object Lock", "source", in.Source, "place", l.Place, "id", l.ID, "error", l.Error)
	}
	for _, l := range res.Failed {
		log.Warn("retention: delete failed", "source", in.Source, "place", l.Place, "id", l.ID, "error", l.Error)
	}
	return res, nil
}

// retentionRemover removes, for ApplyRetention, what retention.Apply
// asks of one source: local snapshots, remote ones, archived hours.
type retentionRemover struct {
	a      *Activities
	source string
	log    *slog.Logger
}

// RemoveLocal removes local snapshots under the source folder's publish
// lock, then prunes the key maps no table file uses any more.
func (r retentionRemover) RemoveLocal(ctx context.Context, ids []string) (map[string]error, error) {
	dir := r.a.sourceDir(r.source)
	unlock, err := snapshot.LockPublish(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	failed := map[string]error{}
	for _, id := range ids {
		if err := snapshot.RemoveSnapshot(dir, id); err != nil {
			failed[id] = err
		}
	}
	if err := r.a.pruneKeyMaps(); err != nil {
		r.log.Warn("key maps not pruned", "error", err)
	}
	return failed, nil
}

// RemoveSnapshot deletes a remote snapshot (remote.Mirror.DeleteSnapshot).
func (r retentionRemover) RemoveSnapshot(ctx context.Context, id string) error {
	m, err := remote.New(r.a.Remote, r.source, r.a.sourceDir(r.source), nil)
	if err != nil {
		return err
	}
	return m.DeleteSnapshot(ctx, id)
}

// RemoveUnreferenced deletes the source's content objects no remote
// manifest refers to, past the grace period (remote.Mirror.SweepObjects).
func (r retentionRemover) RemoveUnreferenced(ctx context.Context) ([]string, map[string]error, error) {
	m, err := remote.New(r.a.Remote, r.source, r.a.sourceDir(r.source), r.log)
	if err != nil {
		return nil, nil, err
	}
	sw, err := m.SweepObjects(ctx)
	return sw.Deleted, sw.Refused, err
}

// RemoveHour deletes an archived hour's file, then the index's record of
// it; a locked file keeps its record (readers still find it whole).
func (r retentionRemover) RemoveHour(ctx context.Context, it retention.Item) error {
	if err := r.a.Remote.Delete(ctx, it.ID); err != nil {
		return err
	}
	return r.a.Index.ForgetArchive(ctx, r.source, change.HourID(it.Time))
}
