package workflows

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/exportdir"
)

// ExportWorkflowID is the id of an export of source to out: one run at a
// time per output (a second `dbtrail export` to the same path is refused
// while the first runs).
func ExportWorkflowID(source, out string) string {
	h := sha256.Sum256([]byte(filepath.Clean(out)))
	return "export-" + source + "-" + hex.EncodeToString(h[:6])
}

// ExportInput is an export: activities.ExportSpec plus how many tables are
// written at once (default 2).
type ExportInput struct {
	activities.ExportSpec
	Parallel int
}

// ExportResult is the finished export: where it is, what it holds and the
// moment (its cut) or range it is of.
type ExportResult struct {
	Out    string
	Plan   activities.PlanExportResult
	Tables []activities.ExportTableResult
	Rows   int64
	Events int64
	Finish activities.FinishExportResult
}

// ExportProgress is what the "progress" query of an export returns.
type ExportProgress struct {
	Phase       string
	TablesTotal int
	TablesDone  int
	Rows        int64
}

// exportActivityOptions are the options of an export's heartbeating
// activities (they heartbeat every activities.HeartbeatEvery).
var exportActivityOptions = longOptions(12*time.Hour, 5*activities.HeartbeatEvery, time.Minute)

// Export writes a moment (format sql or parquet) or the changes of a range
// (changes) to in.Out: PlanExport decides everything first (the cut, the
// snapshot each table starts from, the tables), ExportTable writes each
// table into a staging folder next to Out (at most Parallel at once; a
// retry reuses tables an earlier attempt finished), and FinishExport moves
// the complete export into place. Nothing is written under Out before the
// last step. A failed run removes its staging folder.
func Export(ctx workflow.Context, in ExportInput) (ExportResult, error) {
	progress := ExportProgress{Phase: "planning"}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (ExportProgress, error) { return progress, nil }); err != nil {
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
		progress = ExportProgress{Phase: "planning"}
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
func exportSteps(ctx workflow.Context, in ExportInput, staging, runID string, res *ExportResult, progress *ExportProgress) error {
	long := workflow.WithActivityOptions(ctx, exportActivityOptions)
	fail := func(err error) error {
		dctx, cancel := workflow.NewDisconnectedContext(ctx)
		defer cancel()
		dctx = workflow.WithActivityOptions(dctx, shortOptions(time.Minute))
		if rerr := workflow.ExecuteActivity(dctx, a.RemoveExportStaging, activities.RemoveStagingInput{Staging: staging}).Get(dctx, nil); rerr != nil {
			workflow.GetLogger(ctx).Warn("export staging folder not removed", "staging", staging, "error", rerr)
		}
		return err
	}
	if err := workflow.ExecuteActivity(long, a.PlanExport, activities.PlanExportInput{Spec: in.ExportSpec, Staging: staging}).Get(ctx, &res.Plan); err != nil {
		return fail(err)
	}
	jobs := res.Plan.Jobs
	progress.Phase, progress.TablesTotal = "writing tables", len(jobs)
	res.Tables = make([]activities.ExportTableResult, len(jobs))
	err := bounded(long, len(jobs), in.Parallel, func(i int) workflow.Future {
		return workflow.ExecuteActivity(long, a.ExportTable, jobs[i])
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
	if err := workflow.ExecuteActivity(long, a.FinishExport, activities.FinishExportInput{Spec: in.ExportSpec, Staging: staging,
		RunID: runID, Plan: res.Plan, Tables: res.Tables}).Get(ctx, &res.Finish); err != nil {
		return fail(err)
	}
	return nil
}
