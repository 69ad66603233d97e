package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
)

// writeViewsChange is the workflow version that added WriteViews after a
// publish; histories from before it replay without the activity.
const writeViewsChange = "write-views-after-publish"

// viewsBesideUploadChange is the workflow version that runs a refresh's
// WriteViews beside its UploadSnapshot (both only read the published
// snapshot); histories from before it ran them one after the other.
const viewsBesideUploadChange = "views-beside-upload"

// writeViews runs WriteViews after a publish of source: views.sql gets the
// published shape. A failure is logged, not returned: the snapshot is
// published, and `dbtrail query` generates its views from the snapshot
// itself.
func writeViews(ctx workflow.Context, source string) {
	startWriteViews(ctx, source)()
}

// startWriteViews starts writeViews's step and returns the wait for it
// (which logs a failure), so that the caller can run another step
// meanwhile.
func startWriteViews(ctx workflow.Context, source string) (wait func()) {
	if workflow.GetVersion(ctx, writeViewsChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return func() {}
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumInterval: 30 * time.Second, MaximumAttempts: 5},
	})
	f := workflow.ExecuteActivity(actx, calls.WriteViews, calls.WriteViewsInput{Source: source})
	return func() {
		var res calls.WriteViewsResult
		if err := f.Get(ctx, &res); err != nil {
			workflow.GetLogger(ctx).Warn("views.sql not updated", "source", source, "error", err)
		}
	}
}
