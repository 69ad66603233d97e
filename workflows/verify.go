package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/activities"
)

// DefaultVerifyEvery is the interval of the scheduled verify when a
// worker asks for one without saying (--verify-every).
const DefaultVerifyEvery = 24 * time.Hour

// VerifyWorkflowID is the schedule id of a source's scheduled verify.
func VerifyWorkflowID(source string) string { return "verify-" + source }

// VerifyInput names the source, the snapshot ("current" or "" for the
// current one, else an id) and the tables (schema.table; none: all).
type VerifyInput struct {
	Source   string
	Snapshot string   `json:",omitempty"`
	Tables   []string `json:",omitempty"`
}

// VerifyProgress is what the "progress" query of a verify returns.
type VerifyProgress struct {
	Phase string
}

// verifyOptions: a verify reads whole tables on the source; it heartbeats.
var verifyOptions = longOptions(12*time.Hour, 5*activities.HeartbeatEvery, time.Minute)

// Verify compares every table of a snapshot with the live source by
// fingerprint (activities.VerifySnapshot) on one worker: the one that
// published the latest snapshot first, and a worker without the current
// snapshot downloads it from the remote store first. It completes with the
// verdicts, mismatches included (they are the result, for status and
// alerts); it fails only when no verdict could be reached.
func Verify(ctx workflow.Context, in VerifyInput) (activities.VerifySnapshotResult, error) {
	progress := VerifyProgress{Phase: "starting"}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (VerifyProgress, error) { return progress, nil }); err != nil {
		return activities.VerifySnapshotResult{}, err
	}
	var res activities.VerifySnapshotResult
	_, err := onOneHost(ctx, lastPublisher(ctx, in.Source), func(sctx workflow.Context) error {
		if in.Snapshot == "" || in.Snapshot == "current" {
			if _, err := downloadCurrent(sctx, in.Source, &progress.Phase); err != nil {
				return err
			}
		}
		progress.Phase = "verifying tables"
		return workflow.ExecuteActivity(workflow.WithActivityOptions(sctx, verifyOptions), a.VerifySnapshot,
			activities.VerifySnapshotInput{Source: in.Source, Snapshot: in.Snapshot, Tables: in.Tables}).Get(sctx, &res)
	})
	if err != nil {
		return activities.VerifySnapshotResult{}, err
	}
	progress.Phase = "done"
	return res, nil
}
