package snapshot

import (
	"context"
	"log/slog"
)

// RunChecker tells whether a workflow run still runs (the orchestrator is
// the only one who knows: never a folder's age).
type RunChecker interface {
	Running(ctx context.Context, workflowID, runID string) (bool, error)
}

// SweepStagings removes the staging folders of sourceDir whose owner run
// no longer runs, except keep's (the caller's own; "" for none). A folder
// with no owner recorded, or whose owner cannot be looked up, is kept and
// logged; an error is a folder that could not be listed or removed.
func SweepStagings(ctx context.Context, sourceDir, keep string, runs RunChecker, log *slog.Logger) error {
	list, err := Stagings(sourceDir)
	if err != nil {
		return err
	}
	for _, s := range list {
		if s.ID == keep {
			continue
		}
		if s.Owner == nil {
			log.Warn("staging folder kept: no owner recorded", slog.String("dir", sourceDir), slog.String("snapshot", s.ID))
			continue
		}
		running, err := runs.Running(ctx, s.Owner.WorkflowID, s.Owner.RunID)
		if err != nil {
			log.Warn("staging folder kept: its owner run could not be looked up", slog.String("dir", sourceDir),
				slog.String("snapshot", s.ID), slog.String("workflow_id", s.Owner.WorkflowID), slog.String("error", err.Error()))
			continue
		}
		if running {
			continue
		}
		if err := RemoveStaging(sourceDir, s.ID); err != nil {
			return err
		}
		log.Info("orphan staging folder removed: its run no longer runs", slog.String("dir", sourceDir), slog.String("snapshot", s.ID),
			slog.String("workflow_id", s.Owner.WorkflowID), slog.String("run_id", s.Owner.RunID))
	}
	return nil
}
