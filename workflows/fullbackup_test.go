package workflows

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/payload"
)

func fullBackupEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	return fullBackupEnvDumping(t, func(context.Context, calls.DumpInput) {})
}

// fullBackupEnvDumping is fullBackupEnv whose Dump tells seen its input.
func fullBackupEnvDumping(t *testing.T, seen func(context.Context, calls.DumpInput)) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{EnableSessionWorker: true})
	env.RegisterActivity(&activities.Activities{})
	env.OnActivity(a.AllocateSnapshot, mock.Anything, mock.Anything).Return(calls.AllocateSnapshotResult{SnapshotID: "20261129T090000Z"}, nil)
	env.OnActivity(a.Dump, mock.Anything, mock.Anything).Return(func(ctx context.Context, in calls.DumpInput) (calls.DumpResult, error) {
		seen(ctx, in)
		return calls.DumpResult{Dir: "/work/main/20261129T090000Z", Position: binlogpos.Position{File: "binlog.000003", Pos: 900},
			Tables: []calls.TableRef{{Schema: "app", Table: "a"}, {Schema: "app", Table: "b"}, {Schema: "app", Table: "c"}}}, nil
	})
	env.OnActivity(a.MapPosition, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.MapPositionInput) (calls.MapPositionResult, error) {
		p := in.Position
		p.Seq = 42
		return calls.MapPositionResult{Position: p}, nil
	})
	env.OnActivity(a.ExactFloats, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.ExactFloatsInput) (calls.ExactFloatsResult, error) {
		if in.Position.Seq != 42 || len(in.Tables) != 3 {
			return calls.ExactFloatsResult{}, errors.New("ExactFloats got the wrong position or tables")
		}
		return calls.ExactFloatsResult{Files: []string{"", ".exactfloats/1.floats", ""}}, nil
	})
	env.OnActivity(a.WriteViews, mock.Anything, mock.Anything).Return(calls.WriteViewsResult{}, nil)
	return env
}

func TestFullBackupConvertsEveryTableAndPublishesInOrder(t *testing.T) {
	env := fullBackupEnv(t)
	env.OnActivity(a.ConvertTable, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.ConvertTableInput) (calls.ConvertTableResult, error) {
		if in.Position.Seq != 42 || in.SnapshotID != "20261129T090000Z" {
			return calls.ConvertTableResult{}, errors.New("convert got the wrong position or snapshot")
		}
		if want := map[string]string{"b": ".exactfloats/1.floats"}[in.Table.Table]; in.Floats != want {
			return calls.ConvertTableResult{}, fmt.Errorf("convert of %s got fix file %q, want %q", in.Table.Table, in.Floats, want)
		}
		return calls.ConvertTableResult{Schema: in.Table.Schema, Table: in.Table.Table, Rows: 10}, nil
	})
	var published calls.PublishInput
	env.OnActivity(a.Publish, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.PublishInput) (calls.PublishResult, error) {
		published = in
		return calls.PublishResult{SnapshotID: in.SnapshotID}, nil
	})
	env.OnActivity(a.RemoveDump, mock.Anything, mock.Anything).Return(nil)
	env.ExecuteWorkflow(FullBackup, payload.FullBackupInput{Source: "main"})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: %v", env.GetWorkflowError())
	}
	var res FullBackupResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Tables != 3 || res.Rows != 30 || res.Position.Seq != 42 {
		t.Fatalf("result %+v", res)
	}
	if len(published.Tables) != 3 || published.Tables[0].Table != "a" || published.Tables[2].Table != "c" || published.Position.Seq != 42 {
		t.Fatalf("published %+v", published)
	}
}

func TestFullBackupPublishesNothingWhenATableFails(t *testing.T) {
	env := fullBackupEnv(t)
	env.OnActivity(a.ConvertTable, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.ConvertTableInput) (calls.ConvertTableResult, error) {
		if in.Table.Table == "b" {
			return calls.ConvertTableResult{}, temporal.NewNonRetryableApplicationError("app.b.00000.sql:7: unterminated string", payload.ErrBadDump, nil)
		}
		return calls.ConvertTableResult{Schema: in.Table.Schema, Table: in.Table.Table, Rows: 1}, nil
	})
	published := false
	env.OnActivity(a.Publish, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.PublishInput) (calls.PublishResult, error) {
		published = true
		return calls.PublishResult{}, nil
	})
	env.ExecuteWorkflow(FullBackup, payload.FullBackupInput{Source: "main"})
	err := env.GetWorkflowError()
	if err == nil || published {
		t.Fatalf("a failed table must fail the backup before publish; err %v published %v", err, published)
	}
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != payload.ErrBadDump {
		t.Fatalf("the table's error must surface, got %v", err)
	}
}

func TestFullBackupRefusedWhenIndexCannotCoverTheDump(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{EnableSessionWorker: true})
	env.RegisterActivity(&activities.Activities{})
	env.OnActivity(a.AllocateSnapshot, mock.Anything, mock.Anything).Return(calls.AllocateSnapshotResult{SnapshotID: "x"}, nil)
	env.OnActivity(a.Dump, mock.Anything, mock.Anything).Return(calls.DumpResult{Dir: "/w/x"}, nil)
	env.OnActivity(a.MapPosition, mock.Anything, mock.Anything).Return(calls.MapPositionResult{},
		temporal.NewNonRetryableApplicationError("capture started after it", "PositionNotCovered", nil))
	env.ExecuteWorkflow(FullBackup, payload.FullBackupInput{Source: "main"})
	var app *temporal.ApplicationError
	if err := env.GetWorkflowError(); !errors.As(err, &app) || app.Type() != "PositionNotCovered" {
		t.Fatalf("want PositionNotCovered, got %v", err)
	}
}

// TestPartialFullBackupFinishesAPartialSnapshot: with Tables the run dumps
// those tables only (sorted, without duplicates), converts them, finishes
// them as a partial snapshot instead of publishing (no Publish, no views,
// no upload, no publisher recorded) and returns what it did.
func TestPartialFullBackupFinishesAPartialSnapshot(t *testing.T) {
	var dumped calls.DumpInput
	env := fullBackupEnvDumping(t, func(_ context.Context, in calls.DumpInput) { dumped = in })
	env.OnActivity(a.ConvertTable, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.ConvertTableInput) (calls.ConvertTableResult, error) {
		return calls.ConvertTableResult{Schema: in.Table.Schema, Table: in.Table.Table, Rows: 10}, nil
	})
	env.OnActivity(a.Publish, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.PublishInput) (calls.PublishResult, error) {
		return calls.PublishResult{}, errors.New("a partial full backup must not publish")
	})
	env.OnActivity(a.UploadSnapshot, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.UploadSnapshotInput) (calls.UploadSnapshotResult, error) {
		return calls.UploadSnapshotResult{}, errors.New("a partial full backup must not upload")
	})
	var finished calls.FinishPartialInput
	env.OnActivity(a.FinishPartial, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.FinishPartialInput) (calls.FinishPartialResult, error) {
		finished = in
		return calls.FinishPartialResult{SnapshotID: in.SnapshotID, Redump: index.Redump{Source: in.Source, StartedAt: in.Started,
			Finished: in.Started.Add(time.Minute), Snapshot: in.SnapshotID, Tables: []string{"app.a", "app.b", "app.c"}, Rows: 30, Seq: in.Position.Seq}}, nil
	})
	env.OnActivity(a.RemoveDump, mock.Anything, mock.Anything).Return(nil)
	env.ExecuteWorkflow(FullBackup, payload.FullBackupInput{Source: "main", Tables: []string{"app.c", "app.a", "app.b", "app.a"}})
	if !env.IsWorkflowCompleted() || env.GetWorkflowError() != nil {
		t.Fatalf("workflow: %v", env.GetWorkflowError())
	}
	var res FullBackupResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dumped.Tables, []string{"app.a", "app.b", "app.c"}) {
		t.Fatalf("dumped %v, want the sorted list without duplicates", dumped.Tables)
	}
	if finished.SnapshotID != "20261129T090000Z" || finished.Position.Seq != 42 || len(finished.Tables) != 3 || finished.Started.IsZero() {
		t.Fatalf("finished %+v", finished)
	}
	if res.SnapshotID != "20261129T090000Z" || res.Tables != 3 || res.Rows != 30 || res.Position.Seq != 42 || res.Upload != nil ||
		res.Partial == nil || res.Partial.Took != time.Minute || len(res.Partial.Tables) != 3 {
		t.Fatalf("result %+v partial %+v", res, res.Partial)
	}
	env.AssertNotCalled(t, "Publish", mock.Anything, mock.Anything)
	env.AssertNotCalled(t, "WriteViews", mock.Anything, mock.Anything)
	env.AssertNotCalled(t, "UploadSnapshot", mock.Anything, mock.Anything)
}

// TestPartialFullBackupRefusesBadTables: a list entry that is not
// schema.table is refused before anything runs.
func TestPartialFullBackupRefusesBadTables(t *testing.T) {
	for _, tables := range [][]string{{"nodot"}, {"app.t1", "app.t 2"}, {"mysql.user"}} {
		env := fullBackupEnv(t)
		env.ExecuteWorkflow(FullBackup, payload.FullBackupInput{Source: "main", Tables: tables})
		var app *temporal.ApplicationError
		if err := env.GetWorkflowError(); !errors.As(err, &app) || app.Type() != payload.ErrBadInput {
			t.Fatalf("%q: want BadInput, got %v", tables, err)
		}
		env.AssertNotCalled(t, "AllocateSnapshot", mock.Anything, mock.Anything)
	}
}
