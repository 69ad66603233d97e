package workflows

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/mock"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/payload"
)

// TestRefreshLinksUnchangedTablesInOneStep: the link tables of a plan run
// in one LinkTables step, the others one RefreshTable each, and the
// published tables keep the plan's order.
func TestRefreshLinksUnchangedTablesInOneStep(t *testing.T) {
	keys := []foldplan.TableKey{{Schema: "app", Table: "a"}, {Schema: "app", Table: "b"}, {Schema: "app", Table: "c"},
		{Schema: "app", Table: "d"}}
	plan := foldplan.Plan{Cut: 50, Tables: []foldplan.TablePlan{
		{Key: keys[0], Action: foldplan.ActionLink}, {Key: keys[1], Action: foldplan.ActionPair, Next: 3, Changes: 4},
		{Key: keys[2], Action: foldplan.ActionLink}, {Key: keys[3], Action: foldplan.ActionLink}}}
	env := refreshEnv(t, plan)
	var folded []string
	env.OnActivity(a.RefreshTable, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.RefreshTableInput) (calls.ConvertTableResult, error) {
		folded = append(folded, in.Table.Key.String())
		return calls.ConvertTableResult{Schema: in.Table.Key.Schema, Table: in.Table.Key.Table, Origin: "pair"}, nil
	})
	var batches [][]string
	env.OnActivity(a.LinkTables, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.LinkTablesInput) (calls.LinkTablesResult, error) {
		var names []string
		var out calls.LinkTablesResult
		for _, ti := range in.Tables {
			names = append(names, ti.Table.Key.String())
			if ti.SnapshotID != "20261129T090500Z" || ti.Prev != "20261129T090000Z" || ti.Cut.Seq != 50 {
				return out, fmt.Errorf("wrong window or snapshot for %s", ti.Table.Key)
			}
			out.Tables = append(out.Tables, calls.ConvertTableResult{Schema: ti.Table.Key.Schema, Table: ti.Table.Key.Table, Origin: "linked"})
		}
		batches = append(batches, names)
		return out, nil
	})
	var pub calls.PublishRefreshInput
	env.OnActivity(a.PublishRefresh, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.PublishRefreshInput) (calls.PublishResult, error) {
		pub = in
		return calls.PublishResult{SnapshotID: in.SnapshotID}, nil
	})
	env.OnActivity(a.Prune, mock.Anything, mock.Anything).Return(calls.PruneResult{}, nil)
	env.ExecuteWorkflow(Refresh, payload.RefreshInput{Source: "main", TableDeltas: true})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(batches) != 1 || len(batches[0]) != 3 || batches[0][0] != "app.a" || batches[0][2] != "app.d" {
		t.Fatalf("link steps %v; want one with app.a, app.c, app.d", batches)
	}
	if len(folded) != 1 || folded[0] != "app.b" {
		t.Fatalf("RefreshTable ran for %v; want app.b only", folded)
	}
	want := []string{"a:linked", "b:pair", "c:linked", "d:linked"}
	if len(pub.Tables) != len(want) {
		t.Fatalf("published %d tables, want %d", len(pub.Tables), len(want))
	}
	for i, w := range want {
		if got := pub.Tables[i].Table + ":" + string(pub.Tables[i].Origin); got != w {
			t.Fatalf("published table %d is %s; want %s (the plan's order)", i, got, w)
		}
	}
}
