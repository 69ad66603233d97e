package activities

import (
	"context"
	"log/slog"

	"go.temporal.io/sdk/activity"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// RunChecker tells whether a workflow run still runs (the worker's
// Temporal client answers it): what decides that a staging folder is an
// orphan.
type RunChecker = snapshot.RunChecker

// RemoveSnapshotStaging removes the staging folder of a snapshot whose run
// failed (and its owner file); what is already gone is no error, and a
// published snapshot is never touched. A malformed id is BadInput; a folder
// that cannot be removed is retried.
func (a *Activities) RemoveSnapshotStaging(ctx context.Context, in calls.RemoveSnapshotStagingInput) error {
	if _, err := snapshot.ParseSnapshotID(in.SnapshotID); err != nil {
		return badInput(err)
	}
	if err := snapshot.RemoveStaging(a.sourceDir(in.Source), in.SnapshotID); err != nil {
		return err
	}
	a.log(ctx).Info("staging folder of a failed run removed", slog.String("source", in.Source), slog.String("snapshot", in.SnapshotID))
	return nil
}

// ownStaging records the activity's workflow run as the owner of staging
// folder id, then removes the source's staging folders whose owner run no
// longer runs (asked of Temporal through a.Runs, never judged by age),
// and says what it removed. Without a.Runs, or for a folder with no owner
// recorded, nothing is removed.
func (a *Activities) ownStaging(ctx context.Context, source, id string) error {
	dir := a.sourceDir(source)
	info := activity.GetInfo(ctx)
	if err := snapshot.WriteStagingOwner(dir, id, snapshot.Owner{WorkflowID: info.WorkflowExecution.ID, RunID: info.WorkflowExecution.RunID}); err != nil {
		return err
	}
	return a.sweepStaging(ctx, a.log(ctx), source, id)
}

// SweepStaging removes the source's staging folders whose owner run no
// longer runs, as AllocateSnapshot does (a worker sweeps them at its start
// through snapshot.SweepStagings).
func (a *Activities) SweepStaging(ctx context.Context, source string) error {
	log := a.Log
	if log == nil {
		log = slog.Default()
	}
	return a.sweepStaging(ctx, log, source, "")
}

// sweepStaging removes the orphan staging folders of source except keep's
// (snapshot.SweepStagings), when the worker can ask which runs still run.
func (a *Activities) sweepStaging(ctx context.Context, log *slog.Logger, source, keep string) error {
	if a.Runs == nil {
		return nil
	}
	return snapshot.SweepStagings(ctx, a.sourceDir(source), keep, a.Runs, log.With(slog.String("source", source)))
}
