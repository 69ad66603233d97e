package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/retention"
)

// DefaultRetentionEvery is the interval of a source's retention schedule.
const DefaultRetentionEvery = time.Hour

// RetentionWorkflowID is the schedule id of a source's retention.
func RetentionWorkflowID(source string) string { return "retention-" + source }

// RetentionInput names the source. It carries no policy: the worker's
// (activities.Activities.Retention, docs/retention.md) applies, and the
// plan records it. A Policy field of inputs recorded before the policy
// moved to the worker (schedules made by an older dbtrail) decodes and is
// ignored.
type RetentionInput struct {
	Source string
}

// RetentionProgress is what the "progress" query of a retention run
// returns.
type RetentionProgress struct {
	Phase   string
	Removes int // items the plan removes
}

// retentionOptions: listing a store and deleting objects is bounded work;
// the apply step heartbeats while it deletes.
var (
	planRetentionOptions  = shortOptions(10 * time.Minute)
	applyRetentionOptions = longOptions(time.Hour, 5*activities.HeartbeatEvery, time.Minute)
)

// Retention applies the retention policy of the worker that published the
// source's latest snapshot (it holds the local folder), on that worker:
// PlanRetention lists every place and decides with its policy
// (retention.Make, recorded in the history),
// then ApplyRetention removes what the plan says. Deletes refused by Object
// Lock are in the result, not failures.
func Retention(ctx workflow.Context, in RetentionInput) (activities.RetentionResult, error) {
	progress := RetentionProgress{Phase: "planning"}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (RetentionProgress, error) { return progress, nil }); err != nil {
		return activities.RetentionResult{}, err
	}
	var res activities.RetentionResult
	_, err := onOneHost(ctx, lastPublisher(ctx, in.Source), func(sctx workflow.Context) error {
		progress.Phase = "planning"
		var plan retention.Plan
		if err := workflow.ExecuteActivity(workflow.WithActivityOptions(sctx, planRetentionOptions), a.PlanRetention,
			activities.RetentionInput{Source: in.Source}).Get(sctx, &plan); err != nil {
			return err
		}
		progress.Phase, progress.Removes = "removing", len(plan.Removals())
		return workflow.ExecuteActivity(workflow.WithActivityOptions(sctx, applyRetentionOptions), a.ApplyRetention,
			activities.ApplyRetentionInput{Source: in.Source, Plan: plan}).Get(sctx, &res)
	})
	if err != nil {
		return activities.RetentionResult{}, err
	}
	progress.Phase = "done"
	return res, nil
}

// RetentionPreview plans a source's retention without removing anything
// (PlanRetention alone, on the worker that holds the local folder): what
// the next Retention run would remove, for `dbtrail status` and GET
// /v1/status. It is not a job (jobs lists no preview).
func RetentionPreview(ctx workflow.Context, in RetentionInput) (retention.Plan, error) {
	var plan retention.Plan
	_, err := onOneHost(ctx, lastPublisher(ctx, in.Source), func(sctx workflow.Context) error {
		return workflow.ExecuteActivity(workflow.WithActivityOptions(sctx, planRetentionOptions), a.PlanRetention,
			activities.RetentionInput{Source: in.Source}).Get(sctx, &plan)
	})
	return plan, err
}
