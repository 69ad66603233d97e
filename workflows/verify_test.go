package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/payload"
)

func verifyEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{EnableSessionWorker: true})
	env.RegisterActivity(&activities.Activities{})
	return env
}

// TestVerifyCurrentDownloadsThenVerifies: a verify of the current snapshot
// first makes sure the worker holds it, then returns the verdicts,
// mismatches included, as its result (it completes).
func TestVerifyCurrentDownloadsThenVerifies(t *testing.T) {
	env := verifyEnv()
	var steps []string
	env.OnActivity(a.DownloadCurrent, mock.Anything, mock.Anything).Return(func(context.Context, calls.DownloadCurrentInput) (calls.DownloadCurrentResult, error) {
		steps = append(steps, "download")
		return calls.DownloadCurrentResult{}, nil
	})
	env.OnActivity(a.VerifySnapshot, mock.Anything, mock.Anything).Return(func(_ context.Context, in calls.VerifySnapshotInput) (calls.VerifySnapshotResult, error) {
		steps = append(steps, "verify")
		if in.Source != "main" || in.Snapshot != "current" || len(in.Tables) != 1 {
			t.Errorf("VerifySnapshot input %+v", in)
		}
		return calls.VerifySnapshotResult{SnapshotID: "20261129T090000Z", Match: 1, Mismatch: 1,
			Tables: []calls.TableVerdict{{Table: "app.a", Verdict: "match"}, {Table: "app.b", Verdict: "mismatch"}}}, nil
	})
	env.ExecuteWorkflow(Verify, payload.VerifyInput{Source: "main", Snapshot: "current", Tables: []string{"app.a"}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res calls.VerifySnapshotResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Mismatch != 1 || res.Match != 1 || len(steps) != 2 || steps[0] != "download" || steps[1] != "verify" {
		t.Fatalf("result %+v, steps %v", res, steps)
	}
}

// TestVerifyNamedSnapshotDownloadsNothing: a verify of a named snapshot
// does not fetch current.
func TestVerifyNamedSnapshotDownloadsNothing(t *testing.T) {
	env := verifyEnv()
	env.OnActivity(a.VerifySnapshot, mock.Anything, mock.Anything).Return(calls.VerifySnapshotResult{SnapshotID: "20261129T090000Z"}, nil)
	env.ExecuteWorkflow(Verify, payload.VerifyInput{Source: "main", Snapshot: "20261129T090000Z"})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	env.AssertNotCalled(t, "DownloadCurrent", mock.Anything, mock.Anything)
}
