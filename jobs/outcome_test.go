package jobs

import (
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	sdktestsuite "go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/payload"
)

func TestFailureMessage(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{temporal.NewApplicationErrorWithCause("publish", "Publish", errors.New("disk full")), "publish: disk full"},
		{temporal.NewNonRetryableApplicationError("dump x: no rows", payload.ErrBadDump, errors.New("no rows")), "dump x: no rows"},
		{temporal.NewApplicationErrorWithCause("", "Wrapped", errors.New("disk full")), "disk full"},
		{errors.New("plain"), "plain"},
		{nil, "no reason given"},
	} {
		if got := failureMessage(tc.err); got != tc.want {
			t.Errorf("failureMessage(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestRunOutcomeCanceled is a run canceled (in the UI, say) while the CLI
// waits: it did not fail, it was canceled.
func TestRunOutcomeCanceled(t *testing.T) {
	var s sdktestsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterDelayedCallback(env.CancelWorkflow, time.Minute)
	env.ExecuteWorkflow(func(ctx workflow.Context) error { return workflow.Sleep(ctx, time.Hour) })
	if got, want := Outcome(env.GetWorkflowError()), "was canceled"; got != want {
		t.Fatalf("Outcome = %q, want %q (error %v)", got, want, env.GetWorkflowError())
	}
}
