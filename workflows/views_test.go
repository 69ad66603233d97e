package workflows

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/payload"
)

// TestPublishThenWriteViews: a full backup runs WriteViews for its source
// right after Publish, and a failing WriteViews does not fail the backup
// (the snapshot is published; dbtrail query does not need views.sql).
func TestPublishThenWriteViews(t *testing.T) {
	for _, fail := range []bool{false, true} {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		env.SetWorkerOptions(worker.Options{EnableSessionWorker: true})
		env.RegisterActivity(&activities.Activities{})
		var order []string
		record := func(name string) { order = append(order, name) }
		env.OnActivity(a.AllocateSnapshot, mock.Anything, mock.Anything).Return(calls.AllocateSnapshotResult{SnapshotID: "20261129T090000Z"}, nil)
		env.OnActivity(a.Dump, mock.Anything, mock.Anything).Return(calls.DumpResult{Dir: "/w/d",
			Tables: []calls.TableRef{{Schema: "app", Table: "a"}}}, nil)
		env.OnActivity(a.MapPosition, mock.Anything, mock.Anything).Return(calls.MapPositionResult{}, nil)
		env.OnActivity(a.ExactFloats, mock.Anything, mock.Anything).Return(calls.ExactFloatsResult{Files: []string{""}}, nil)
		env.OnActivity(a.ConvertTable, mock.Anything, mock.Anything).Return(calls.ConvertTableResult{Schema: "app", Table: "a"}, nil)
		env.OnActivity(a.UploadSnapshot, mock.Anything, mock.Anything).Return(calls.UploadSnapshotResult{}, nil)
		env.OnActivity(a.Publish, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.PublishInput) (calls.PublishResult, error) {
			record("Publish")
			return calls.PublishResult{SnapshotID: in.SnapshotID}, nil
		})
		env.OnActivity(a.WriteViews, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.WriteViewsInput) (calls.WriteViewsResult, error) {
			record("WriteViews " + in.Source)
			if fail {
				return calls.WriteViewsResult{}, errors.New("disk full")
			}
			return calls.WriteViewsResult{Wrote: true}, nil
		})
		env.OnActivity(a.RemoveDump, mock.Anything, mock.Anything).Return(func(context.Context, calls.RemoveDumpInput) error {
			record("RemoveDump")
			return nil
		})
		env.ExecuteWorkflow(FullBackup, payload.FullBackupInput{Source: "main"})
		if err := env.GetWorkflowError(); err != nil {
			t.Fatalf("fail %v: %v", fail, err)
		}
		if i := slices.Index(order, "Publish"); i < 0 || i+1 >= len(order) || order[i+1] != "WriteViews main" || order[len(order)-1] != "RemoveDump" {
			t.Fatalf("fail %v: activities ran in order %v", fail, order)
		}
	}
}
