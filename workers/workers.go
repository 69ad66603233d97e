// Package workers registers dbtrail's workflows and activities on a
// Temporal worker.
//
// PLACEHOLDER: only the Ping workflow and activity, used to check a worker
// end to end (the embedded server's tests, `dbtrail dev`). The real
// registration, Register(w, deps), replaces this file.
package workers

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Register registers every workflow and activity on w.
func Register(w worker.Worker) {
	w.RegisterWorkflowWithOptions(Ping, workflow.RegisterOptions{Name: "Ping"})
	w.RegisterActivityWithOptions(PingActivity, activity.RegisterOptions{Name: "PingActivity"})
}

// Ping runs PingActivity once and returns its answer: "pong: " + msg.
func Ping(ctx workflow.Context, msg string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, "PingActivity", msg).Get(ctx, &out)
	return out, err
}

// PingActivity answers "pong: " + msg.
func PingActivity(_ context.Context, msg string) (string, error) {
	return "pong: " + msg, nil
}
