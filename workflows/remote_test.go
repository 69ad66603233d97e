package workflows

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/payload"
)

// TestRefreshDownloadsFirstAndUploadsBeforePrune: DownloadCurrent runs
// before the plan, UploadSnapshot after the publish and before retention,
// and their results reach the refresh's result.
func TestRefreshDownloadsFirstAndUploadsBeforePrune(t *testing.T) {
	plan := foldplan.Plan{Cut: 50, Tables: []foldplan.TablePlan{{Key: tA, Action: foldplan.ActionLink}}}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{EnableSessionWorker: true})
	env.RegisterActivity(&activities.Activities{})
	env.OnActivity(a.AllocateSnapshot, mock.Anything, mock.Anything).Return(calls.AllocateSnapshotResult{SnapshotID: "20261129T090500Z"}, nil)
	var order []string
	step := func(name string) { order = append(order, name) }
	env.OnActivity(a.DownloadCurrent, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.DownloadCurrentInput) (calls.DownloadCurrentResult, error) {
		step("download " + in.Source)
		return calls.DownloadCurrentResult{SnapshotID: "20261129T090000Z"}, nil
	})
	env.OnActivity(a.PlanRefresh, mock.Anything, mock.Anything).Return(func(context.Context, calls.PlanRefreshInput) (calls.PlanRefreshResult, error) {
		step("plan")
		return calls.PlanRefreshResult{Prev: "20261129T090000Z", PrevSeq: 40, Cut: binlogpos.Position{Seq: 50}, Plan: plan}, nil
	})
	env.OnActivity(a.RefreshTable, mock.Anything, mock.Anything).Return(calls.ConvertTableResult{}, nil)
	env.OnActivity(a.PublishRefresh, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.PublishRefreshInput) (calls.PublishResult, error) {
		step("publish")
		return calls.PublishResult{SnapshotID: in.SnapshotID}, nil
	})
	env.OnActivity(a.UploadSnapshot, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.UploadSnapshotInput) (calls.UploadSnapshotResult, error) {
		step("upload " + in.SnapshotID)
		return calls.UploadSnapshotResult{Location: "s3://b/p", FilesUploaded: 3, BytesUploaded: 1234}, nil
	})
	env.OnActivity(a.Prune, mock.Anything, mock.Anything).Return(func(context.Context, calls.PruneInput) (calls.PruneResult, error) {
		step("prune")
		return calls.PruneResult{}, nil
	})
	env.ExecuteWorkflow(Refresh, payload.RefreshInput{Source: "main", TableDeltas: true})
	var res RefreshResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	want := []string{"download main", "plan", "publish", "upload 20261129T090500Z", "prune"}
	if !slices.Equal(order, want) {
		t.Fatalf("steps %v, want %v", order, want)
	}
	if res.Downloaded != "20261129T090000Z" || res.Upload == nil || res.Upload.BytesUploaded != 1234 {
		t.Fatalf("result %+v", res)
	}
}

// TestRefreshFailedUploadFailsTheRunAndPrunesNothing: an upload that keeps
// failing fails the run after the attempt limit, with its error; retention
// and compaction do not run.
func TestRefreshFailedUploadFailsTheRunAndPrunesNothing(t *testing.T) {
	plan := foldplan.Plan{Cut: 50, Tables: []foldplan.TablePlan{{Key: tA, Action: foldplan.ActionPair, NeedsCompaction: true}},
		Compact: []foldplan.CompactJob{{Key: tA}}}
	env := refreshEnv(t, plan)
	env.OnActivity(a.RefreshTable, mock.Anything, mock.Anything).Return(calls.ConvertTableResult{}, nil)
	env.OnActivity(a.PublishRefresh, mock.Anything, mock.Anything).Return(calls.PublishResult{SnapshotID: "20261129T090500Z"}, nil)
	attempts := 0
	env.OnActivity(a.UploadSnapshot, mock.Anything, mock.Anything).Return(func(context.Context, calls.UploadSnapshotInput) (calls.UploadSnapshotResult, error) {
		attempts++
		return calls.UploadSnapshotResult{}, errors.New("upload snapshot 20261129T090500Z to s3://b/p: connection refused")
	})
	pruned := false
	env.OnActivity(a.Prune, mock.Anything, mock.Anything).Return(func(context.Context, calls.PruneInput) (calls.PruneResult, error) {
		pruned = true
		return calls.PruneResult{}, nil
	})
	env.ExecuteWorkflow(Refresh, payload.RefreshInput{Source: "main", TableDeltas: true})
	err := env.GetWorkflowError()
	var app *temporal.ApplicationError
	if err == nil || !errors.As(err, &app) || app.Error() != "upload snapshot 20261129T090500Z to s3://b/p: connection refused" {
		t.Fatalf("workflow error %v", err)
	}
	if attempts != MaxAttempts || pruned {
		t.Fatalf("%d attempts, pruned %v", attempts, pruned)
	}
}

// TestFullBackupUploadsAfterPublish: a full backup ends with the upload of
// its snapshot; a failed upload fails it.
func TestFullBackupUploadsAfterPublish(t *testing.T) {
	for _, fail := range []bool{false, true} {
		env := fullBackupEnv(t)
		env.OnActivity(a.ConvertTable, mock.Anything, mock.Anything).Return(calls.ConvertTableResult{Rows: 1}, nil)
		published := false
		env.OnActivity(a.Publish, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.PublishInput) (calls.PublishResult, error) {
			published = true
			return calls.PublishResult{SnapshotID: in.SnapshotID}, nil
		})
		env.OnActivity(a.RemoveDump, mock.Anything, mock.Anything).Return(nil)
		var up calls.UploadSnapshotInput
		env.OnActivity(a.UploadSnapshot, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.UploadSnapshotInput) (calls.UploadSnapshotResult, error) {
			if !published {
				return calls.UploadSnapshotResult{}, temporal.NewNonRetryableApplicationError("upload before publish", payload.ErrBadPlan, nil)
			}
			up = in
			if fail {
				return calls.UploadSnapshotResult{}, temporal.NewNonRetryableApplicationError("altered file", payload.ErrBrokenSnapshot, nil)
			}
			return calls.UploadSnapshotResult{Location: "s3://b/p", FilesUploaded: 7}, nil
		})
		env.ExecuteWorkflow(FullBackup, payload.FullBackupInput{Source: "main"})
		if up.Source != "main" || up.SnapshotID != "20261129T090000Z" {
			t.Fatalf("upload input %+v", up)
		}
		if fail {
			if env.GetWorkflowError() == nil {
				t.Fatal("a failed upload did not fail the full backup")
			}
			continue
		}
		var res FullBackupResult
		if err := env.GetWorkflowResult(&res); err != nil {
			t.Fatal(err)
		}
		if res.Upload == nil || res.Upload.FilesUploaded != 7 {
			t.Fatalf("result %+v", res)
		}
	}
}
