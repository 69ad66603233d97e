package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/payload"
)

// linkBatchChange is the change id (workflow.GetVersion) of the link
// tables run in one LinkTables step: histories recorded before it ran one
// RefreshTable per table, as they ran.
const linkBatchChange = "link-batch"

// refreshTablesBatched runs the plan's link tables in one LinkTables step
// on the stager (a link only hard-links files the stager holds) beside the
// other tables (refreshTables), and returns every table's result in the
// plan's order. A refresh whose tables are mostly unchanged pays one step
// for them, not one per table.
func refreshTablesBatched(ctx, root workflow.Context, in payload.RefreshInput, id string, plan calls.PlanRefreshResult,
	progress *payload.RefreshProgress) ([]calls.ConvertTableResult, bool, error) {
	links, rest := splitLinks(plan.Plan.Tables)
	if len(links) < 2 || workflow.GetVersion(ctx, linkBatchChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return refreshTables(ctx, root, in, id, plan, progress)
	}
	long := workflow.WithActivityOptions(ctx, refreshActivityOptions)
	lin := calls.LinkTablesInput{}
	for _, i := range links {
		lin.Tables = append(lin.Tables, refreshTableInput(in, id, plan, plan.Plan.Tables[i]))
	}
	linked := workflow.ExecuteActivity(long, calls.LinkTables, lin)
	others := plan
	others.Plan.Tables = nil
	for _, i := range rest {
		others.Plan.Tables = append(others.Plan.Tables, plan.Plan.Tables[i])
	}
	var restRes []calls.ConvertTableResult
	shared := false
	var err error
	if len(rest) > 0 {
		restRes, shared, err = refreshTables(ctx, root, in, id, others, progress)
	}
	var lres calls.LinkTablesResult
	if lerr := linked.Get(ctx, &lres); err == nil {
		err = lerr
	}
	if err == nil && len(lres.Tables) != len(links) {
		err = fmt.Errorf("link tables: %d results for %d tables", len(lres.Tables), len(links))
	}
	if err != nil {
		return nil, shared, err
	}
	progress.TablesDone += len(links)
	out := make([]calls.ConvertTableResult, len(plan.Plan.Tables))
	for k, i := range links {
		out[i] = lres.Tables[k]
	}
	for k, i := range rest {
		out[i] = restRes[k]
	}
	return out, shared, nil
}

// splitLinks returns the indexes of the plan's link tables and of the
// others, each in the plan's order.
func splitLinks(tables []foldplan.TablePlan) (links, rest []int) {
	for i, t := range tables {
		if t.Action == foldplan.ActionLink {
			links = append(links, i)
		} else {
			rest = append(rest, i)
		}
	}
	return links, rest
}
