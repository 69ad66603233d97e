package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
)

// MaxAttempts bounds the attempts of every activity. An error no retry can
// cure is non-retryable (payload.ErrBadInput and its siblings) and fails
// the run at once; any other error that persists fails it after MaxAttempts
// attempts (minutes of backoff), with the last attempt's error, so no run
// waits forever without saying why. A killed worker's attempt counts too:
// ten kills of the same step in a row fail the run.
const MaxAttempts = 10

// retry is the retry policy of every activity: exponential backoff from one
// second up to maxInterval between attempts, at most MaxAttempts attempts.
func retry(maxInterval time.Duration) *temporal.RetryPolicy {
	return &temporal.RetryPolicy{MaximumInterval: maxInterval, MaximumAttempts: MaxAttempts}
}

// shortOptions are the options of an activity that does a bounded amount of
// work (allocate, publish, remove a folder) within timeout.
func shortOptions(timeout time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{StartToCloseTimeout: timeout, RetryPolicy: retry(time.Minute)}
}

// longOptions are the options of an activity that heartbeats while it works
// for up to timeout (dump, convert, fold, compact): a worker that dies is
// noticed after heartbeat without a heartbeat.
func longOptions(timeout, heartbeat, maxInterval time.Duration) workflow.ActivityOptions {
	return workflow.ActivityOptions{StartToCloseTimeout: timeout, HeartbeatTimeout: heartbeat, RetryPolicy: retry(maxInterval)}
}

// refreshActivityOptions are the options of the refresh's and compaction's
// heartbeating activities.
var refreshActivityOptions = longOptions(6*time.Hour, 5*calls.HeartbeatEvery, time.Minute)

// transferOptions are the options of the snapshot upload and download: they
// heartbeat like the refresh's activities, with a shorter maximum retry
// interval (10 s), so an object store that stays unreachable fails the run
// within a couple of minutes, naming the store; the local snapshot is kept
// and the next run uploads what is missing.
var transferOptions = longOptions(12*time.Hour, 5*calls.HeartbeatEvery, 10*time.Second)
