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
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/foldplan"
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
	env.OnActivity(a.AllocateSnapshot, mock.Anything, mock.Anything).Return(activities.AllocateSnapshotResult{SnapshotID: "20261129T090500Z"}, nil)
	var order []string
	step := func(name string) { order = append(order, name) }
	env.OnActivity(a.DownloadCurrent, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.DownloadCurrentInput) (activities.DownloadCurrentResult, error) {
		step("download " + in.Source)
		return activities.DownloadCurrentResult{SnapshotID: "20261129T090000Z"}, nil
	})
	env.OnActivity(a.PlanRefresh, mock.Anything, mock.Anything).Return(func(context.Context, activities.PlanRefreshInput) (activities.PlanRefreshResult, error) {
		step("plan")
		return activities.PlanRefreshResult{Prev: "20261129T090000Z", PrevSeq: 40, Cut: binlogpos.Position{Seq: 50}, Plan: plan}, nil
	})
	env.OnActivity(a.RefreshTable, mock.Anything, mock.Anything).Return(activities.ConvertTableResult{}, nil)
	env.OnActivity(a.PublishRefresh, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.PublishRefreshInput) (activities.PublishResult, error) {
		step("publish")
		return activities.PublishResult{SnapshotID: in.SnapshotID}, nil
	})
	env.OnActivity(a.UploadSnapshot, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.UploadSnapshotInput) (activities.UploadSnapshotResult, error) {
		step("upload " + in.SnapshotID)
		return activities.UploadSnapshotResult{Location: "s3://b/p", FilesUploaded: 3, BytesUploaded: 1234}, nil
	})
	env.OnActivity(a.Prune, mock.Anything, mock.Anything).Return(func(context.Context, activities.PruneInput) (activities.PruneResult, error) {
		step("prune")
		return activities.PruneResult{}, nil
	})
	env.ExecuteWorkflow(Refresh, RefreshInput{Source: "main", TableDeltas: true})
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
	env.OnActivity(a.RefreshTable, mock.Anything, mock.Anything).Return(activities.ConvertTableResult{}, nil)
	env.OnActivity(a.PublishRefresh, mock.Anything, mock.Anything).Return(activities.PublishResult{SnapshotID: "20261129T090500Z"}, nil)
	attempts := 0
	env.OnActivity(a.UploadSnapshot, mock.Anything, mock.Anything).Return(func(context.Context, activities.UploadSnapshotInput) (activities.UploadSnapshotResult, error) {
		attempts++
		return activities.UploadSnapshotResult{}, errors.New("upload snapshot 20261129T090500Z to s3://b/p: connection refused")
	})
	pruned := false
	env.OnActivity(a.Prune, mock.Anything, mock.Anything).Return(func(context.Context, activities.PruneInput) (activities.PruneResult, error) {
		pruned = true
		return activities.PruneResult{}, nil
	})
	env.ExecuteWorkflow(Refresh, RefreshInput{Source: "main", TableDeltas: true})
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
		env.OnActivity(a.ConvertTable, mock.Anything, mock.Anything).Return(activities.ConvertTableResult{Rows: 1}, nil)
		published := false
		env.OnActivity(a.Publish, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.PublishInput) (activities.PublishResult, error) {
			published = true
			return activities.PublishResult{SnapshotID: in.SnapshotID}, nil
		})
		env.OnActivity(a.RemoveDump, mock.Anything, mock.Anything).Return(nil)
		var up activities.UploadSnapshotInput
		env.OnActivity(a.UploadSnapshot, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.UploadSnapshotInput) (activities.UploadSnapshotResult, error) {
			if !published {
				return activities.UploadSnapshotResult{}, temporal.NewNonRetryableApplicationError("upload before publish", activities.ErrBadPlan, nil)
			}
			up = in
			if fail {
				return activities.UploadSnapshotResult{}, temporal.NewNonRetryableApplicationError("altered file", activities.ErrBrokenSnapshot, nil)
			}
			return activities.UploadSnapshotResult{Location: "s3://b/p", FilesUploaded: 7}, nil
		})
		env.ExecuteWorkflow(FullBackup, FullBackupInput{Source: "main"})
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
