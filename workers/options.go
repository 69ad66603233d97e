package workers

import "go.temporal.io/sdk/worker"

// Options are the options every dbtrail worker runs with: sessions are on
// (worker.Options.EnableSessionWorker), as the workflows run the steps that
// hand each other local folders in a session on one worker. A worker without
// them never takes a session, and a run whose sessions no worker takes waits
// for one, then fails.
func Options() worker.Options {
	return worker.Options{EnableSessionWorker: true}
}
