package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/payload"
)

// retentionOptions: listing a store and deleting objects is bounded work;
// the apply step heartbeats while it deletes.
var (
	planRetentionOptions  = shortOptions(10 * time.Minute)
	applyRetentionOptions = longOptions(time.Hour, 5*calls.HeartbeatEvery, time.Minute)
)

// Retention applies the retention policy of the worker that published the
// source's latest snapshot (it holds the local folder), on that worker:
// PlanRetention lists every place and decides with its policy
// (retention.Make, recorded in the history),
// then ApplyRetention removes what the plan says. Deletes refused by Object
// Lock are in the result, not failures.
func Retention(ctx workflow.Context, in payload.RetentionInput) (calls.RetentionResult, error) {
	progress := payload.RetentionProgress{Phase: "planning"}
	if err := workflow.SetQueryHandler(ctx, payload.ProgressQuery, func() (payload.RetentionProgress, error) { return progress, nil }); err != nil {
		return calls.RetentionResult{}, err
	}
	var res calls.RetentionResult
	_, err := onOneHost(ctx, lastPublisher(ctx, in.Source), func(sctx workflow.Context) error {
		progress.Phase = "planning"
		var plan retention.Plan
		if err := workflow.ExecuteActivity(workflow.WithActivityOptions(sctx, planRetentionOptions), calls.PlanRetention,
			calls.RetentionInput{Source: in.Source}).Get(sctx, &plan); err != nil {
			return err
		}
		progress.Phase, progress.Removes = "removing", len(plan.Removals())
		return workflow.ExecuteActivity(workflow.WithActivityOptions(sctx, applyRetentionOptions), calls.ApplyRetention,
			calls.ApplyRetentionInput{Source: in.Source, Plan: plan}).Get(sctx, &res)
	})
	if err != nil {
		return calls.RetentionResult{}, err
	}
	progress.Phase = "done"
	return res, nil
}

// RetentionPreview plans a source's retention without removing anything
// (PlanRetention alone, on the worker that holds the local folder): what
// the next Retention run would remove, for `dbtrail status` and GET
// /v1/status. It is not a job (jobs lists no preview).
func RetentionPreview(ctx workflow.Context, in payload.RetentionInput) (retention.Plan, error) {
	var plan retention.Plan
	_, err := onOneHost(ctx, lastPublisher(ctx, in.Source), func(sctx workflow.Context) error {
		return workflow.ExecuteActivity(workflow.WithActivityOptions(sctx, planRetentionOptions), calls.PlanRetention,
			calls.RetentionInput{Source: in.Source}).Get(sctx, &plan)
	})
	return plan, err
}
