package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/exportdir"
	"github.com/dbtrail/dbtrail/payload"
)

// ExportResult is the finished export: where it is, what it holds and the
// moment (its cut) or range it is of.
type ExportResult struct {
	Out    string
	Plan   calls.PlanExportResult
	Tables []calls.ExportTableResult
	Rows   int64
	Events int64
	Finish calls.FinishExportResult
}

// exportActivityOptions are the options of an export's heartbeating
// activities (they heartbeat every calls.HeartbeatEvery).
var exportActivityOptions = longOptions(12*time.Hour, 5*calls.HeartbeatEvery, time.Minute)

// Export writes a moment (format sql or parquet) or the changes of a range
// (changes) to in.Out: PlanExport decides everything first (the cut, the
// snapshot each table starts from, the tables), ExportTable writes each
// table into a staging folder next to Out (at most Parallel at once; a
// retry reuses tables an earlier attempt finished), and FinishExport moves
// the complete export into place. Nothing is written under Out before the
// last step. A failed run removes its staging folder.
func Export(ctx workflow.Context, in payload.ExportInput) (ExportResult, error) {
	progress := payload.ExportProgress{Phase: "planning"}
	if err := workflow.SetQueryHandler(ctx, payload.ProgressQuery, func() (payload.ExportProgress, error) { return progress, nil }); err != nil {
		return ExportResult{}, err
	}
	if in.Parallel <= 0 {
		in.Parallel = 2
	}
	runID := workflow.GetInfo(ctx).WorkflowExecution.RunID
	staging := exportdir.StagingDir(in.Out, runID)
	var res ExportResult
	// Every step reads or writes the staging folder on the worker's disk:
	// they run on one host, again from the start on another if it dies.
	_, err := onOneHost(ctx, nil, func(sctx workflow.Context) error {
		res = ExportResult{Out: in.Out}
		progress = payload.ExportProgress{Phase: "planning"}
		return exportSteps(sctx, in, staging, runID, &res, &progress)
	})
	if err != nil {
		return res, err
	}
	progress.Phase = "done"
	return res, nil
}

// exportSteps plans the export, writes every table into staging and moves
// the complete export into place, all with ctx's worker; a failure removes
// the staging folder.
func exportSteps(ctx workflow.Context, in payload.ExportInput, staging, runID string, res *ExportResult, progress *payload.ExportProgress) error {
	long := workflow.WithActivityOptions(ctx, exportActivityOptions)
	fail := func(err error) error {
		dctx, cancel := workflow.NewDisconnectedContext(ctx)
		defer cancel()
		dctx = workflow.WithActivityOptions(dctx, shortOptions(time.Minute))
		if rerr := workflow.ExecuteActivity(dctx, calls.RemoveExportStaging, calls.RemoveStagingInput{Staging: staging}).Get(dctx, nil); rerr != nil {
			workflow.GetLogger(ctx).Warn("export staging folder not removed", "staging", staging, "error", rerr)
		}
		return err
	}
	if err := workflow.ExecuteActivity(long, calls.PlanExport, calls.PlanExportInput{Spec: in.ExportSpec, Staging: staging}).Get(ctx, &res.Plan); err != nil {
		return fail(err)
	}
	jobs := res.Plan.Jobs
	progress.Phase, progress.TablesTotal = "writing tables", len(jobs)
	res.Tables = make([]calls.ExportTableResult, len(jobs))
	err := bounded(long, len(jobs), in.Parallel, func(i int) workflow.Future {
		return workflow.ExecuteActivity(long, calls.ExportTable, jobs[i])
	}, func(i int, f workflow.Future) error {
		if err := f.Get(ctx, &res.Tables[i]); err != nil {
			return err
		}
		progress.TablesDone++
		progress.Rows += res.Tables[i].Rows
		return nil
	})
	if err != nil {
		return fail(err)
	}
	for _, t := range res.Tables {
		res.Rows += t.Rows
		res.Events += t.Events
	}
	progress.Phase = "finishing"
	if err := workflow.ExecuteActivity(long, calls.FinishExport, calls.FinishExportInput{Spec: in.ExportSpec, Staging: staging,
		RunID: runID, Plan: res.Plan, Tables: res.Tables}).Get(ctx, &res.Finish); err != nil {
		return fail(err)
	}
	return nil
}
