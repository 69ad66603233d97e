package e2e

import (
	"slices"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
)

// stepKill is what killInStep did: whether it killed the worker, and
// whether the kill landed in the step (the step's activity was still
// running, not completed, when the worker was gone).
type stepKill struct {
	Killed, Landed bool
	Attempt        int32 // the killed activity's attempt
}

// killInStep waits until an activity of type step of the run
// (workflowID, runID) runs on a worker (pending and started) and SIGKILLs
// the worker process wp at once. It then checks the kill landed in the
// step: the same activity, same attempt, is still pending after the worker
// died (a step that completed between the look and the kill would not
// be). When the run closes, or steps it must not kill in come first (a
// step after the target: the target was missed), it kills nothing. No
// timer decides where the kill lands: the run's own state does.
func killInStep(t *testing.T, e *backupEnv, wp *workerProc, workflowID, runID, step string, after ...string) stepKill {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		desc, err := e.c.DescribeWorkflowExecution(e.ctx, workflowID, runID)
		must(t, err)
		if desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return stepKill{}
		}
		for _, pa := range desc.GetPendingActivities() {
			name := pa.GetActivityType().GetName()
			if pa.GetState() != enumspb.PENDING_ACTIVITY_STATE_STARTED {
				continue
			}
			if slices.Contains(after, name) {
				return stepKill{}
			}
			if name != step {
				continue
			}
			must(t, wp.cmd.Process.Signal(syscall.SIGKILL))
			wp.cmd.Wait()
			return stepKill{Killed: true, Landed: stillPending(t, e, workflowID, runID, pa), Attempt: pa.GetAttempt()}
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("%s of %s never ran", step, workflowID)
	return stepKill{}
}

// stillPending reports whether the activity pa of the run is still
// pending, at the same attempt.
func stillPending(t *testing.T, e *backupEnv, workflowID, runID string, pa *workflowpb.PendingActivityInfo) bool {
	t.Helper()
	desc, err := e.c.DescribeWorkflowExecution(e.ctx, workflowID, runID)
	must(t, err)
	for _, p := range desc.GetPendingActivities() {
		if p.GetActivityId() == pa.GetActivityId() && p.GetAttempt() == pa.GetAttempt() {
			return true
		}
	}
	return false
}
