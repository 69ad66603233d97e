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
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/index"
)

func fullBackupEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	return fullBackupEnvDumping(t, func(context.Context, activities.DumpInput) {})
}

// fullBackupEnvDumping is fullBackupEnv whose Dump tells seen its input.
func fullBackupEnvDumping(t *testing.T, seen func(context.Context, activities.DumpInput)) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{EnableSessionWorker: true})
	env.RegisterActivity(&activities.Activities{})
	env.OnActivity(a.AllocateSnapshot, mock.Anything, mock.Anything).Return(activities.AllocateSnapshotResult{SnapshotID: "20261129T090000Z"}, nil)
	env.OnActivity(a.Dump, mock.Anything, mock.Anything).Return(func(ctx context.Context, in activities.DumpInput) (activities.DumpResult, error) {
		seen(ctx, in)
		return activities.DumpResult{Dir: "/work/main/20261129T090000Z", Position: binlogpos.Position{File: "binlog.000003", Pos: 900},
			Tables: []activities.TableRef{{Schema: "app", Table: "a"}, {Schema: "app", Table: "b"}, {Schema: "app", Table: "c"}}}, nil
	})
	env.OnActivity(a.MapPosition, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.MapPositionInput) (activities.MapPositionResult, error) {
		p := in.Position
		p.Seq = 42
		return activities.MapPositionResult{Position: p}, nil
	})
	env.OnActivity(a.ExactFloats, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ExactFloatsInput) (activities.ExactFloatsResult, error) {
		if in.Position.Seq != 42 || len(in.Tables) != 3 {
			return activities.ExactFloatsResult{}, errors.New("ExactFloats got the wrong position or tables")
		}
		return activities.ExactFloatsResult{Files: []string{"", ".exactfloats/1.floats", ""}}, nil
	})
	env.OnActivity(a.WriteViews, mock.Anything, mock.Anything).Return(activities.WriteViewsResult{}, nil)
	return env
}

func TestFullBackupConvertsEveryTableAndPublishesInOrder(t *testing.T) {
	env := fullBackupEnv(t)
	env.OnActivity(a.ConvertTable, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ConvertTableInput) (activities.ConvertTableResult, error) {
		if in.Position.Seq != 42 || in.SnapshotID != "20261129T090000Z" {
			return activities.ConvertTableResult{}, errors.New("convert got the wrong position or snapshot")
		}
		if want := map[string]string{"b": ".exactfloats/1.floats"}[in.Table.Table]; in.Floats != want {
			return activities.ConvertTableResult{}, fmt.Errorf("convert of %s got fix file %q, want %q", in.Table.Table, in.Floats, want)
		}
		return activities.ConvertTableResult{Schema: in.Table.Schema, Table: in.Table.Table, Rows: 10}, nil
	})
	var published activities.PublishInput
	env.OnActivity(a.Publish, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.PublishInput) (activities.PublishResult, error) {
		published = in
		return activities.PublishResult{SnapshotID: in.SnapshotID}, nil
	})
	env.OnActivity(a.RemoveDump, mock.Anything, mock.Anything).Return(nil)
	env.ExecuteWorkflow(FullBackup, FullBackupInput{Source: "main"})
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
	env.OnActivity(a.ConvertTable, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ConvertTableInput) (activities.ConvertTableResult, error) {
		if in.Table.Table == "b" {
			return activities.ConvertTableResult{}, temporal.NewNonRetryableApplicationError("app.b.00000.sql:7: unterminated string", activities.ErrBadDump, nil)
		}
		return activities.ConvertTableResult{Schema: in.Table.Schema, Table: in.Table.Table, Rows: 1}, nil
	})
	published := false
	env.OnActivity(a.Publish, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.PublishInput) (activities.PublishResult, error) {
		published = true
		return activities.PublishResult{}, nil
	})
	env.ExecuteWorkflow(FullBackup, FullBackupInput{Source: "main"})
	err := env.GetWorkflowError()
	if err == nil || published {
		t.Fatalf("a failed table must fail the backup before publish; err %v published %v", err, published)
	}
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != activities.ErrBadDump {
		t.Fatalf("the table's error must surface, got %v", err)
	}
}

func TestFullBackupRefusedWhenIndexCannotCoverTheDump(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{EnableSessionWorker: true})
	env.RegisterActivity(&activities.Activities{})
	env.OnActivity(a.AllocateSnapshot, mock.Anything, mock.Anything).Return(activities.AllocateSnapshotResult{SnapshotID: "x"}, nil)
	env.OnActivity(a.Dump, mock.Anything, mock.Anything).Return(activities.DumpResult{Dir: "/w/x"}, nil)
	env.OnActivity(a.MapPosition, mock.Anything, mock.Anything).Return(activities.MapPositionResult{},
		temporal.NewNonRetryableApplicationError("capture started after it", "PositionNotCovered", nil))
	env.ExecuteWorkflow(FullBackup, FullBackupInput{Source: "main"})
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
	var dumped activities.DumpInput
	env := fullBackupEnvDumping(t, func(_ context.Context, in activities.DumpInput) { dumped = in })
	env.OnActivity(a.ConvertTable, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.ConvertTableInput) (activities.ConvertTableResult, error) {
		return activities.ConvertTableResult{Schema: in.Table.Schema, Table: in.Table.Table, Rows: 10}, nil
	})
	env.OnActivity(a.Publish, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.PublishInput) (activities.PublishResult, error) {
		return activities.PublishResult{}, errors.New("a partial full backup must not publish")
	})
	env.OnActivity(a.UploadSnapshot, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.UploadSnapshotInput) (activities.UploadSnapshotResult, error) {
		return activities.UploadSnapshotResult{}, errors.New("a partial full backup must not upload")
	})
	var finished activities.FinishPartialInput
	env.OnActivity(a.FinishPartial, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.FinishPartialInput) (activities.FinishPartialResult, error) {
		finished = in
		return activities.FinishPartialResult{SnapshotID: in.SnapshotID, Redump: index.Redump{Source: in.Source, StartedAt: in.Started,
			Finished: in.Started.Add(time.Minute), Snapshot: in.SnapshotID, Tables: []string{"app.a", "app.b", "app.c"}, Rows: 30, Seq: in.Position.Seq}}, nil
	})
	env.OnActivity(a.RemoveDump, mock.Anything, mock.Anything).Return(nil)
	env.ExecuteWorkflow(FullBackup, FullBackupInput{Source: "main", Tables: []string{"app.c", "app.a", "app.b", "app.a"}})
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
		env.ExecuteWorkflow(FullBackup, FullBackupInput{Source: "main", Tables: tables})
		var app *temporal.ApplicationError
		if err := env.GetWorkflowError(); !errors.As(err, &app) || app.Type() != activities.ErrBadInput {
			t.Fatalf("%q: want BadInput, got %v", tables, err)
		}
		env.AssertNotCalled(t, "AllocateSnapshot", mock.Anything, mock.Anything)
	}
}
