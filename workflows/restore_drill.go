package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/payload"
)

// RestoreDrill runs a restore drill (Restore with Drill set: every table,
// or the spec's selection, restored into scratch schemas of the target,
// verified, the schemas dropped) and records its verdict in the index
// (activities.RecordDrill) whether it passed or failed: when, the moment
// and its cut, the tables and rows, the verdict and the time taken. A
// failed drill is recorded, then fails the run with the restore's error.
func RestoreDrill(ctx workflow.Context, in payload.RestoreDrillInput) (RestoreResult, error) {
	in.Restore.Drill = true
	if in.Restore.At == "" {
		in.Restore.At = "latest"
	}
	started := workflow.Now(ctx)
	res, runErr := Restore(ctx, in.Restore)
	d := index.Drill{Source: in.Restore.Source, StartedAt: started, Finished: workflow.Now(ctx), Target: in.TargetAddr,
		Moment: in.Restore.At, Snapshot: res.Base, Tables: len(res.Tables), Rows: res.Rows, Verdict: index.DrillOK}
	if res.RestoreID != "" {
		d.Cut = res.Cut.String()
	}
	if runErr != nil {
		d.Verdict, d.Failure = index.DrillFailed, runErr.Error()
	}
	sctx := workflow.WithActivityOptions(ctx, shortOptions(time.Minute))
	if err := workflow.ExecuteActivity(sctx, calls.RecordDrill, calls.RecordDrillInput{Drill: d}).Get(ctx, nil); err != nil {
		if runErr != nil {
			return res, runErr
		}
		return res, err
	}
	return res, runErr
}
