package workflows

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/payload"
)

func refreshEnv(t *testing.T, plan foldplan.Plan) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{EnableSessionWorker: true})
	env.RegisterActivity(&activities.Activities{})
	env.RegisterWorkflow(FullBackup)
	env.RegisterWorkflow(Compact)
	env.OnActivity(a.PlanRefresh, mock.Anything, mock.Anything).Return(calls.PlanRefreshResult{
		Prev: "20261129T090000Z", PrevSeq: 40, Cut: binlogpos.Position{File: "binlog.000003", Pos: 900, Seq: 50},
		Plan: plan, DumpConfigured: true}, nil)
	env.OnActivity(a.AllocateSnapshot, mock.Anything, mock.Anything).Return(calls.AllocateSnapshotResult{SnapshotID: "20261129T090500Z"}, nil)
	env.OnActivity(a.WriteViews, mock.Anything, mock.Anything).Return(calls.WriteViewsResult{}, nil)
	return env
}

var (
	tA = foldplan.TableKey{Schema: "app", Table: "a"}
	tB = foldplan.TableKey{Schema: "app", Table: "b"}
)

func TestRefreshExecutesEveryTableAndPublishesAgainstPrev(t *testing.T) {
	plan := foldplan.Plan{Cut: 50, Tables: []foldplan.TablePlan{
		{Key: tA, Action: foldplan.ActionLink}, {Key: tB, Action: foldplan.ActionPair, Next: 3, Changes: 4}}}
	env := refreshEnv(t, plan)
	var done []string
	env.OnActivity(a.RefreshTable, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.RefreshTableInput) (calls.ConvertTableResult, error) {
		if in.PrevSeq != 40 || in.Cut.Seq != 50 || in.Prev != "20261129T090000Z" || in.SnapshotID != "20261129T090500Z" {
			return calls.ConvertTableResult{}, errors.New("wrong window or snapshot")
		}
		done = append(done, in.Table.Key.String())
		return calls.ConvertTableResult{Schema: in.Table.Key.Schema, Table: in.Table.Key.Table}, nil
	})
	var pub calls.PublishRefreshInput
	env.OnActivity(a.PublishRefresh, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.PublishRefreshInput) (calls.PublishResult, error) {
		pub = in
		return calls.PublishResult{SnapshotID: in.SnapshotID}, nil
	})
	var pruned calls.PruneInput
	env.OnActivity(a.Prune, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.PruneInput) (calls.PruneResult, error) {
		pruned = in
		return calls.PruneResult{}, nil
	})
	env.ExecuteWorkflow(Refresh, payload.RefreshInput{Source: "main", TableDeltas: true})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res RefreshResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(done) != 2 || pub.Prev != "20261129T090000Z" || len(pub.Tables) != 2 || pub.Tables[0].Table != "a" || pub.Position.Seq != 50 {
		t.Fatalf("executed %v, published %+v", done, pub)
	}
	if res.SnapshotID != "20261129T090500Z" || res.Refused || pruned.Source != "main" {
		t.Fatalf("result %+v prune %+v", res, pruned)
	}
}

func TestRefreshRefusedRunsFullBackupAndPublishesNothing(t *testing.T) {
	plan := foldplan.Plan{Cut: 50, Refused: true, Reasons: []string{"app.a: a schema change in the window"},
		Tables: []foldplan.TablePlan{{Key: tA, Action: foldplan.ActionRefuse, Reason: "refused: a schema change"}}}
	env := refreshEnv(t, plan)
	published := false
	env.OnActivity(a.PublishRefresh, mock.Anything, mock.Anything).Return(func(context.Context, calls.PublishRefreshInput) (calls.PublishResult, error) {
		published = true
		return calls.PublishResult{}, nil
	})
	ran := false
	env.OnWorkflow(FullBackup, mock.Anything, mock.Anything).Return(func(_ workflow.Context, in payload.FullBackupInput) (FullBackupResult, error) {
		ran = in.Source == "main"
		return FullBackupResult{SnapshotID: "20261129T090600Z"}, nil
	})
	env.ExecuteWorkflow(Refresh, payload.RefreshInput{Source: "main", TableDeltas: true})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res RefreshResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if published || !ran || !res.Refused || res.FullBackup != "20261129T090600Z" || len(res.Reasons) != 1 {
		t.Fatalf("published %v, full backup %v, result %+v", published, ran, res)
	}
}

func TestRefreshRefusedWithoutDumpOnlyReports(t *testing.T) {
	plan := foldplan.Plan{Cut: 50, Refused: true, Reasons: []string{"no previous snapshot"}}
	env := refreshEnv(t, plan)
	env.OnWorkflow(FullBackup, mock.Anything, mock.Anything).Return(FullBackupResult{}, errors.New("must not run"))
	env.ExecuteWorkflow(Refresh, payload.RefreshInput{Source: "main", NoFullBackup: true})
	var res RefreshResult
	if err := env.GetWorkflowResult(&res); err != nil || !res.Refused || res.FullBackup != "" {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestRefreshFailedTablePublishesNothing(t *testing.T) {
	plan := foldplan.Plan{Cut: 50, Tables: []foldplan.TablePlan{{Key: tA, Action: foldplan.ActionPair}, {Key: tB, Action: foldplan.ActionLink}}}
	env := refreshEnv(t, plan)
	env.OnActivity(a.RefreshTable, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.RefreshTableInput) (calls.ConvertTableResult, error) {
		if in.Table.Key == tA {
			return calls.ConvertTableResult{}, temporal.NewNonRetryableApplicationError("event seq 44: malformed image", payload.ErrBadInput, nil)
		}
		return calls.ConvertTableResult{}, nil
	})
	published := false
	env.OnActivity(a.PublishRefresh, mock.Anything, mock.Anything).Return(func(context.Context, calls.PublishRefreshInput) (calls.PublishResult, error) {
		published = true
		return calls.PublishResult{}, nil
	})
	env.ExecuteWorkflow(Refresh, payload.RefreshInput{Source: "main", TableDeltas: true})
	var app *temporal.ApplicationError
	if err := env.GetWorkflowError(); err == nil || published || !errors.As(err, &app) || app.Type() != payload.ErrBadInput {
		t.Fatalf("err %v published %v", err, published)
	}
}

func TestRefreshStartsCompactionAfterPublish(t *testing.T) {
	plan := foldplan.Plan{Cut: 50, Tables: []foldplan.TablePlan{{Key: tA, Action: foldplan.ActionPair, NeedsCompaction: true}},
		Compact: []foldplan.CompactJob{{Key: tA, Merge: []string{"app/a.000000.posdel", "app/a.000000.upserts", "app/a.000001.posdel", "app/a.000001.upserts"}}}}
	env := refreshEnv(t, plan)
	order := []string{}
	env.OnActivity(a.RefreshTable, mock.Anything, mock.Anything).Return(calls.ConvertTableResult{}, nil)
	env.OnActivity(a.PublishRefresh, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.PublishRefreshInput) (calls.PublishResult, error) {
		order = append(order, "publish")
		return calls.PublishResult{SnapshotID: in.SnapshotID}, nil
	})
	env.OnActivity(a.Prune, mock.Anything, mock.Anything).Return(calls.PruneResult{}, nil)
	env.OnActivity(a.CompactTable, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.CompactTableInput) (calls.CompactTableResult, error) {
		order = append(order, "compact "+in.SnapshotID+" "+in.Schema+"."+in.Table+" "+strings.Join(in.Merge, ","))
		return calls.CompactTableResult{Range: "000000-000014"}, nil
	})
	env.ExecuteWorkflow(Refresh, payload.RefreshInput{Source: "main", TableDeltas: true})
	var res RefreshResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(res.Compact) != 1 || len(order) < 1 || order[0] != "publish" {
		t.Fatalf("result %+v order %v", res, order)
	}
	if len(order) == 2 && order[1] != "compact 20261129T090500Z app.a app/a.000000.posdel,app/a.000000.upserts,app/a.000001.posdel,app/a.000001.upserts" {
		t.Fatalf("order %v", order)
	}
}

func TestCompactMergesEachTable(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{EnableSessionWorker: true})
	env.RegisterActivity(&activities.Activities{})
	env.OnActivity(a.CompactTable, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.CompactTableInput) (calls.CompactTableResult, error) {
		if in.Table == "b" {
			return calls.CompactTableResult{}, nil // nothing to merge
		}
		return calls.CompactTableResult{Range: "000000-000014"}, nil
	})
	env.ExecuteWorkflow(Compact, CompactInput{Source: "main", SnapshotID: "20261129T090500Z", Tables: []foldplan.CompactJob{{Key: tA}, {Key: tB}}})
	var res CompactResult
	if err := env.GetWorkflowResult(&res); err != nil || len(res.Ranges) != 1 || res.Ranges[0] != "app.a 000000-000014" {
		t.Fatalf("%+v %v", res, err)
	}
}
