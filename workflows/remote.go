package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
)

// Change ids of the remote steps (workflow.GetVersion): histories recorded
// before a step existed replay without it.
const (
	uploadChange   = "upload-snapshots"
	downloadChange = "download-previous"
)

// uploadSnapshot runs UploadSnapshot after a publish: the new snapshot, and
// any earlier one not confirmed on the remote store, go up (a no-op on a
// worker without a remote store). It returns nil for a history from before
// the step. Its error fails the run: the local snapshot stays and nothing is
// pruned.
func uploadSnapshot(ctx workflow.Context, source, id string, phase *string) (*calls.UploadSnapshotResult, error) {
	if workflow.GetVersion(ctx, uploadChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil, nil
	}
	*phase = "uploading to the remote store"
	var res calls.UploadSnapshotResult
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, transferOptions), calls.UploadSnapshot,
		calls.UploadSnapshotInput{Source: source, SnapshotID: id}).Get(ctx, &res)
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// downloadCurrent runs DownloadCurrent before a refresh plans: a source
// folder without its current snapshot gets the remote one first. It
// returns the id downloaded ("" when none was needed or there is none, and
// for a history from before the step).
func downloadCurrent(ctx workflow.Context, source string, phase *string) (string, error) {
	if workflow.GetVersion(ctx, downloadChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return "", nil
	}
	*phase = "checking the previous snapshot"
	var res calls.DownloadCurrentResult
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, transferOptions), calls.DownloadCurrent,
		calls.DownloadCurrentInput{Source: source}).Get(ctx, &res)
	return res.SnapshotID, err
}
