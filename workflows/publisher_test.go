package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/payload"
)

// TestRefreshAsksForTheLastPublisher: a refresh records the worker that
// published its snapshot, and the next refresh asks for that worker's
// session first (workflow.RecreateSession with the recorded token).
func TestRefreshAsksForTheLastPublisher(t *testing.T) {
	plan := foldplan.Plan{Cut: 50, Tables: []foldplan.TablePlan{{Key: tA, Action: foldplan.ActionLink}}}
	var recorded calls.RecordPublisherInput
	run := func(last calls.PublisherResult) {
		env := refreshEnv(t, plan)
		env.OnActivity(a.LastPublisher, mock.Anything, mock.Anything).Return(last, nil)
		env.OnActivity(a.RecordPublisher, mock.Anything, mock.Anything).Return(
			func(_ context.Context, in calls.RecordPublisherInput) (struct{}, error) {
				recorded = in
				return struct{}{}, nil
			})
		env.OnActivity(a.RefreshTable, mock.Anything, mock.Anything).Return(calls.ConvertTableResult{}, nil)
		env.OnActivity(a.PublishRefresh, mock.Anything, mock.Anything).Return(calls.PublishResult{SnapshotID: "20261129T090500Z"}, nil)
		env.OnActivity(a.Prune, mock.Anything, mock.Anything).Return(calls.PruneResult{}, nil)
		env.ExecuteWorkflow(Refresh, payload.RefreshInput{Source: "main", TableDeltas: true})
		if err := env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
	}
	run(calls.PublisherResult{})
	if recorded.Source != "main" || len(recorded.Token) == 0 || recorded.Host == "" {
		t.Fatalf("recorded publisher %+v", recorded)
	}
	first := recorded
	recorded = calls.RecordPublisherInput{}
	run(calls.PublisherResult{Host: first.Host, Token: first.Token})
	if len(recorded.Token) == 0 {
		t.Fatalf("the second refresh recorded no publisher")
	}
}
