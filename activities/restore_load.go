package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
)

// LoadTable loads chunks of one table into the target for about in.Slice,
// then returns where it stands (the workflow calls it again until Done):
// restore.Load.Run, on the target the worker resolved (openTarget), with
// the table staged once on this worker (stageTable) and its progress as
// the heartbeat's LoadProgress (Loaded: the target's rows, kept through
// the staging's reports).
func (a *Activities) LoadTable(ctx context.Context, in calls.LoadTableInput) (calls.LoadTableResult, error) {
	set, stop := keepAlive(ctx)
	defer stop()
	tg, err := a.openTarget(ctx, in.Spec)
	if err != nil {
		return calls.LoadTableResult{}, err
	}
	defer tg.DB.Close()
	if err := a.checkJobSchemas(tg, in.Spec, in.Job.Schema); err != nil {
		return calls.LoadTableResult{}, err
	}
	name := in.Job.Target()
	var loaded int64 // the rows the target holds, as last reported
	l := restore.Load{Target: &tg.Target, Options: restoreOptions(in.Spec), Job: restore.Job(in.Job), ChunkRows: in.ChunkRows,
		Slice: in.Slice, Parts: in.Parts, PartRows: a.RestorePartRows, Log: a.log(ctx),
		Stage: func(ctx context.Context, progress func(string, int64)) (restore.Staged, *spaceneed.Step, error) {
			return a.stageTable(ctx, in, progress)
		},
		Progress: func(stage string, rows int64, paused string) {
			if restore.HoldsTargetRows(stage) {
				loaded = rows
			}
			set(calls.LoadProgress{Table: name, Stage: stage, Rows: rows, Paused: paused, Loaded: loaded})
		}}
	res, err := l.Run(ctx)
	return calls.LoadTableResult(res), restoreErr(err)
}

// restoreErr passes a restore error of a kind (restore.KindOf) on as a
// non-retryable error of that type, its message unchanged; an error that
// is an application error already (another adapter's, momentErr's) is
// returned as it is.
func restoreErr(err error) error {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return err
	}
	if k := restore.KindOf(err); k != "" {
		return nonRetryable(k, err)
	}
	return err
}
