package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
)

// discardStagingChange is the version id (workflow.GetVersion) of the
// cleanup after a failed backup: histories from before it end without it.
const discardStagingChange = "discard-staging-on-failure"

// discardOnFailure removes what a failed run of a backup staged on its
// worker: the snapshot's staging folder and, when given, the dump folder.
// It runs on the session's worker (ctx is the session's) in a
// disconnected context, so a cancelled run cleans up too. A cleanup that
// fails (the session's worker is gone) is only logged: the next
// AllocateSnapshot on that worker removes staging folders no running run
// owns.
func discardOnFailure(ctx workflow.Context, source, snapshotID, dumpDir string) {
	if workflow.GetVersion(ctx, discardStagingChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	dctx, cancel := cleanupContext(ctx)
	defer cancel()
	log := workflow.GetLogger(ctx)
	if err := workflow.ExecuteActivity(dctx, calls.RemoveSnapshotStaging,
		calls.RemoveSnapshotStagingInput{Source: source, SnapshotID: snapshotID}).Get(dctx, nil); err != nil {
		log.Warn("staging folder of a failed run not removed", "source", source, "snapshot", snapshotID, "error", err)
	}
	if dumpDir == "" {
		return
	}
	if err := workflow.ExecuteActivity(dctx, calls.RemoveDump, calls.RemoveDumpInput{Dir: dumpDir}).Get(dctx, nil); err != nil {
		log.Warn("dump folder of a failed run not removed", "dir", dumpDir, "error", err)
	}
}

// cleanupContext is the context of a stopped run's cleanup: disconnected
// from ctx (so a cancelled run cleans up too), short activities tried
// three times, each given up when no worker starts it within
// cleanupStartWait (ctx's session's worker is gone: its queue has no
// poller, and the cleanup would wait for it forever). cancel releases it.
func cleanupContext(ctx workflow.Context) (workflow.Context, workflow.CancelFunc) {
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	opts := shortOptions(time.Minute)
	opts.ScheduleToStartTimeout = cleanupStartWait
	opts.RetryPolicy = &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3}
	return workflow.WithActivityOptions(dctx, opts), cancel
}

// cleanupStartWait bounds how long a cleanup activity waits for its
// worker to start it: a live worker starts it within a second.
const cleanupStartWait = 30 * time.Second

// sweepPartsChange is the version id (workflow.GetVersion) of the sweep of
// leftover parts at the start of a refresh: histories from before it
// allocate without it.
const sweepPartsChange = "sweep-parts"

// sweepPartsRetry is the retry policy of the sweep of leftover parts: it
// fails only when the store cannot be listed (a folder it cannot sweep is
// skipped and reported), and a refresh waits for it before it allocates,
// so it is tried twice, a second apart, and then left to the next refresh.
var sweepPartsRetry = temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 2}

// sweepParts deletes the source's leftover parts on the store that no
// running run owns (activities.SweepParts), on the stager (ctx is the
// session's, with short options), before the refresh allocates its
// snapshot. It returns what it did, nil when nothing was there to do; a
// sweep that fails is only logged (the next refresh sweeps again).
func sweepParts(ctx workflow.Context, source string) *calls.SweepPartsResult {
	if workflow.GetVersion(ctx, sweepPartsChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	ctx = workflow.WithRetryPolicy(ctx, sweepPartsRetry)
	var res calls.SweepPartsResult
	if err := workflow.ExecuteActivity(ctx, calls.SweepParts, calls.SweepPartsInput{Source: source}).Get(ctx, &res); err != nil {
		workflow.GetLogger(ctx).Warn("leftover parts on the store not swept", "source", source, "error", err)
		return nil
	}
	if res.Deleted == 0 && len(res.Locked) == 0 && len(res.Skipped) == 0 {
		return nil
	}
	return &res
}
