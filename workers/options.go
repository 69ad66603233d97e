package workers

import (
	"fmt"
	"os"

	"go.temporal.io/sdk/worker"
)

// Options are the options every dbtrail worker runs with: sessions are on
// (worker.Options.EnableSessionWorker), as the workflows run the steps that
// hand each other local folders in a session on one worker. A worker without
// them never takes a session, and a run whose sessions no worker takes waits
// for one, then fails.
func Options() worker.Options {
	return worker.Options{EnableSessionWorker: true}
}

// Identity is a worker process's identity: "<pid>@<host>", as the SDK's
// default, set explicitly so that its own queue (activities.WorkerQueue)
// is named by it.
func Identity() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return fmt.Sprintf("%d@%s", os.Getpid(), host)
}

// OwnQueueOptions are the options of the worker that polls a worker's own
// queue (activities.WorkerQueue): the same identity and fatal-error hook
// as the main worker's opts, activities only.
func OwnQueueOptions(opts worker.Options) worker.Options {
	return worker.Options{Identity: opts.Identity, OnFatalError: opts.OnFatalError, DisableWorkflowWorker: true}
}
