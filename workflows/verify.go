package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/payload"
)

// verifyOptions: a verify reads whole tables on the source; it heartbeats.
var verifyOptions = longOptions(12*time.Hour, 5*calls.HeartbeatEvery, time.Minute)

// Verify compares every table of a snapshot with the live source by
// fingerprint (activities.VerifySnapshot) on one worker: the one that
// published the latest snapshot first, and a worker without the current
// snapshot downloads it from the remote store first. It completes with the
// verdicts, mismatches included (they are the result, for status and
// alerts); it fails only when no verdict could be reached.
func Verify(ctx workflow.Context, in payload.VerifyInput) (calls.VerifySnapshotResult, error) {
	progress := payload.VerifyProgress{Phase: "starting"}
	if err := workflow.SetQueryHandler(ctx, payload.ProgressQuery, func() (payload.VerifyProgress, error) { return progress, nil }); err != nil {
		return calls.VerifySnapshotResult{}, err
	}
	var res calls.VerifySnapshotResult
	_, err := onOneHost(ctx, lastPublisher(ctx, in.Source), func(sctx workflow.Context) error {
		if in.Snapshot == "" || in.Snapshot == "current" {
			if _, err := downloadCurrent(sctx, in.Source, &progress.Phase); err != nil {
				return err
			}
		}
		progress.Phase = "verifying tables"
		return workflow.ExecuteActivity(workflow.WithActivityOptions(sctx, verifyOptions), calls.VerifySnapshot,
			calls.VerifySnapshotInput{Source: in.Source, Snapshot: in.Snapshot, Tables: in.Tables}).Get(sctx, &res)
	})
	if err != nil {
		return calls.VerifySnapshotResult{}, err
	}
	progress.Phase = "done"
	return res, nil
}
