// Package workers registers dbtrail's workflows and activities on a
// Temporal worker: RegisterAll (dbtrail.go) every workflow and the
// activities of an *activities.Activities, Options (options.go) the
// options every worker runs with.
//
// Register, here, registers Ping: a workflow whose one activity answers
// "pong: " + msg. It needs no source, index or folder, so it checks a
// worker and the Temporal server end to end: the embedded server's tests
// (temporal/embedded/server_test.go) run it on a bare worker, and RegisterAll puts
// it on every `dbtrail worker` and `dbtrail dev`, where starting "Ping" on
// the task queue checks the setup.
package workers

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"
)

// PingName is the workflow type of Ping, PingActivityName its activity's.
const (
	PingName         = "Ping"
	PingActivityName = "PingActivity"
)

// Register registers Ping and PingActivity on w.
func Register(w Registry) {
	registerPing(w)
	registerPingActivity(w)
}

// registerPing registers the Ping workflow on r.
func registerPing(r WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(Ping, workflow.RegisterOptions{Name: PingName})
}

// registerPingActivity registers PingActivity on r.
func registerPingActivity(r Registry) {
	r.RegisterActivityWithOptions(PingActivity, activity.RegisterOptions{Name: PingActivityName})
}

// Ping runs PingActivity once and returns its answer: "pong: " + msg.
func Ping(ctx workflow.Context, msg string) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
	var out string
	err := workflow.ExecuteActivity(ctx, PingActivityName, msg).Get(ctx, &out)
	return out, err
}

// PingActivity answers "pong: " + msg.
func PingActivity(_ context.Context, msg string) (string, error) {
	return "pong: " + msg, nil
}
