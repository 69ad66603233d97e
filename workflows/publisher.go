package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
)

// stickyPublisherChange is the change id (workflow.GetVersion) of the
// publisher preference: histories recorded before it replay without the
// LastPublisher and RecordPublisher steps.
const stickyPublisherChange = "sticky-publisher"

// publisherOptions are the options of the two publisher steps: a read or a
// pointer swap on the remote store. Either failing only warns: the
// preference saves time, it is never needed for a correct snapshot.
var publisherOptions = shortOptions(time.Minute)

// lastPublisher returns the recreate token of the session that published
// the source's latest snapshot, for onOneHost to ask for its worker first;
// nil when none is recorded, when the step fails, and for histories from
// before the change.
func lastPublisher(ctx workflow.Context, source string) []byte {
	if workflow.GetVersion(ctx, stickyPublisherChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return nil
	}
	var res calls.PublisherResult
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, publisherOptions), calls.LastPublisher,
		calls.PublisherInput{Source: source}).Get(ctx, &res)
	if err != nil {
		workflow.GetLogger(ctx).Warn("cannot read the last publisher; any worker will do", "source", source, "error", err)
		return nil
	}
	return res.Token
}

// recordPublisher records host, the session that just published a snapshot
// of source, for the next refresh (nothing for histories from before the
// change, or without a session).
func recordPublisher(ctx workflow.Context, source string, host sessionHost) {
	if workflow.GetVersion(ctx, stickyPublisherChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion || host.Token == nil {
		return
	}
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, publisherOptions), calls.RecordPublisher,
		calls.RecordPublisherInput{Source: source, Host: host.Host, Token: host.Token}).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Warn("cannot record the publisher", "source", source, "error", err)
	}
}
