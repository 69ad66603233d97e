package workflows

import (
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/payload"
)

// redumpAndReplan runs a partial full backup of the tables the plan could
// not fold (schema changes no rule proves) and plans the refresh again
// with them: each is then rewritten from its partial snapshot forward to
// the new cut, every other table folded as usual, one cut for all. A plan
// that still names tables to re-dump, or a worker that cannot dump,
// refuses (a full backup follows, as for any refusal).
func redumpAndReplan(ctx workflow.Context, in payload.RefreshInput, plan calls.PlanRefreshResult,
	progress *payload.RefreshProgress) (calls.PlanRefreshResult, *RedumpSummary, error) {
	names := tableNames(plan.Plan.Redump)
	if in.NoFullBackup || !plan.DumpConfigured {
		return refusePlan(plan, "tables to dump again ("+strings.Join(names, ", ")+") but no dump is configured on this worker"), nil, nil
	}
	progress.Phase = "re-dumping " + strings.Join(names, ", ")
	fb, err := partialBackup(ctx, in.Source, names)
	if err != nil {
		return plan, nil, fmt.Errorf("partial full backup of %s (%s): %w", strings.Join(names, ", "), strings.Join(redumpReasons(plan.Plan), "; "), err)
	}
	sum := &RedumpSummary{SnapshotID: fb.SnapshotID, Tables: names, Rows: fb.Rows}
	if info := workflow.GetSessionInfo(ctx); info != nil && fb.Partial != nil && fb.Partial.Host != info.HostName {
		workflow.GetLogger(ctx).Warn("partial snapshot on another worker; retention removes it after a day", "snapshot", fb.SnapshotID, "host", fb.Partial.Host)
		return refusePlan(plan, fmt.Sprintf("the partial full backup ran on %s, not on this refresh's worker %s", fb.Partial.Host, info.HostName)), sum, nil
	}
	progress.Phase = "planning again after the re-dump"
	long := workflow.WithActivityOptions(ctx, refreshActivityOptions)
	var again calls.PlanRefreshResult
	if err := workflow.ExecuteActivity(long, calls.PlanRefresh, calls.PlanRefreshInput{Source: in.Source, TableDeltas: in.TableDeltas,
		MaxChainAge: in.MaxChainAge, Redumped: fb.SnapshotID}).Get(ctx, &again); err != nil {
		return plan, sum, err
	}
	if len(again.Plan.Redump) > 0 && !again.Plan.Refused {
		again = refusePlan(again, "schema changes after the re-dump need another one: "+strings.Join(tableNames(again.Plan.Redump), ", "))
	}
	return again, sum, nil
}

// refusePlan marks plan refused for reason.
func refusePlan(plan calls.PlanRefreshResult, reason string) calls.PlanRefreshResult {
	plan.Plan.Refused = true
	plan.Plan.Reasons = append(plan.Plan.Reasons, reason)
	plan.Plan.Reasons = append(plan.Plan.Reasons, redumpReasons(plan.Plan)...)
	plan.Plan.Redump, plan.Plan.Compact = nil, nil
	return plan
}

func tableNames(keys []foldplan.TableKey) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.String()
	}
	return out
}

// redumpReasons are the plan's reasons to re-dump, one per table.
func redumpReasons(p foldplan.Plan) []string {
	var out []string
	for _, t := range p.Tables {
		if t.Action == foldplan.ActionRedump {
			out = append(out, t.Key.String()+": "+strings.TrimPrefix(t.Reason, "redump: "))
		}
	}
	return out
}

// partialBackup runs the partial full backup of tables as a child
// (RedumpWorkflowID), asking for the refresh's own worker first: the
// partial snapshot stays in that worker's folder.
func partialBackup(ctx workflow.Context, source string, tables []string) (FullBackupResult, error) {
	var prefer []byte
	if info := workflow.GetSessionInfo(ctx); info != nil {
		prefer = info.GetRecreateToken()
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            payload.RedumpWorkflowID(source),
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
	})
	var fb FullBackupResult
	err := workflow.ExecuteChildWorkflow(cctx, FullBackup, payload.FullBackupInput{Source: source, Tables: tables, PreferHost: prefer}).Get(ctx, &fb)
	return fb, err
}

// removePartial removes the partial snapshot id on the refresh's worker;
// a failure is only logged (retention removes what is left after a day).
func removePartial(ctx workflow.Context, source, id string) {
	if err := workflow.ExecuteActivity(ctx, calls.RemovePartial, calls.RemovePartialInput{Source: source, SnapshotID: id}).Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("partial snapshot not removed", "source", source, "snapshot", id, "error", err)
	}
}
