package activities

import (
	"context"
	"fmt"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/payload"
)

// LinkTables executes the plans of many link tables in one step: each
// hard-links its table file and chain forward into the staged snapshot
// exactly as RefreshTable does for it. A link writes no bytes and needs
// no room (its estimate is Sure and 0), so one step for all of them saves
// a scheduled activity per unchanged table. A retry links every table
// again (each link is overwritten with the same file). Any other action
// is ErrBadPlan, before anything is linked.
func (a *Activities) LinkTables(ctx context.Context, in calls.LinkTablesInput) (calls.LinkTablesResult, error) {
	for _, t := range in.Tables {
		if t.Table.Action != foldplan.ActionLink || t.Shared || foldsLineage(t.Table) {
			return calls.LinkTablesResult{}, nonRetryable(payload.ErrBadPlan, fmt.Errorf("link tables: %s is planned %q, not a link", t.Table.Key, t.Table.Action))
		}
	}
	set, stop := keepAlive(ctx)
	defer stop()
	out := calls.LinkTablesResult{Tables: make([]calls.ConvertTableResult, 0, len(in.Tables))}
	for i, t := range in.Tables {
		res, err := a.RefreshTable(ctx, t)
		if err != nil {
			return calls.LinkTablesResult{}, err
		}
		out.Tables = append(out.Tables, res)
		set(payload.RefreshTableProgress{Table: t.Table.Key.String(), Stage: fmt.Sprintf("linked %d of %d", i+1, len(in.Tables))})
	}
	return out, nil
}
