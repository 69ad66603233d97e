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
type RunChecker interface {
	Running(ctx context.Context, workflowID, runID string) (bool, error)
}

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
// longer runs, as AllocateSnapshot does: a worker calls it at its start.
func (a *Activities) SweepStaging(ctx context.Context, source string) error {
	log := a.Log
	if log == nil {
		log = slog.Default()
	}
	return a.sweepStaging(ctx, log, source, "")
}

// sweepStaging removes the orphan staging folders of source except keep's.
func (a *Activities) sweepStaging(ctx context.Context, log *slog.Logger, source, keep string) error {
	if a.Runs == nil {
		return nil
	}
	list, err := snapshot.Stagings(a.sourceDir(source))
	if err != nil {
		return err
	}
	for _, s := range list {
		if s.ID == keep {
			continue
		}
		if s.Owner == nil {
			log.Warn("staging folder kept: no owner recorded", slog.String("source", source), slog.String("snapshot", s.ID))
			continue
		}
		running, err := a.Runs.Running(ctx, s.Owner.WorkflowID, s.Owner.RunID)
		if err != nil {
			log.Warn("staging folder kept: its owner run could not be looked up", slog.String("source", source),
				slog.String("snapshot", s.ID), slog.String("workflow_id", s.Owner.WorkflowID), slog.String("error", err.Error()))
			continue
		}
		if running {
			continue
		}
		if err := snapshot.RemoveStaging(a.sourceDir(source), s.ID); err != nil {
			return err
		}
		log.Info("orphan staging folder removed: its run no longer runs", slog.String("source", source), slog.String("snapshot", s.ID),
			slog.String("workflow_id", s.Owner.WorkflowID), slog.String("run_id", s.Owner.RunID))
	}
	return nil
}
