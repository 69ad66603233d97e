package temporalclient

import (
	"context"
	"fmt"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/activities"
)

// LiveWithin is how recently a worker must have polled its own queue to
// count as live: an idle poller polls again about every minute. A worker
// that died within it still counts; the table placed on it comes back to
// the refresh's stager after the placement's wait (workflows).
const LiveWithin = 2 * time.Minute

// Workers lists the live workers of a task queue from the Temporal server
// (activities.WorkerLister).
type Workers struct{ Client client.Client }

// LiveWorkers returns the identities of the workers that polled the
// activities of taskQueue and of their own queue (activities.WorkerQueue)
// within LiveWithin, sorted.
func (w Workers) LiveWorkers(ctx context.Context, taskQueue string) ([]string, error) {
	ids, err := w.pollers(ctx, taskQueue)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range ids {
		own, err := w.pollers(ctx, activities.WorkerQueue(taskQueue, id))
		if err != nil {
			return nil, err
		}
		if slices.Contains(own, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}

// pollers returns the identities that polled the activities of queue
// within LiveWithin.
func (w Workers) pollers(ctx context.Context, queue string) ([]string, error) {
	resp, err := w.Client.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
	if err != nil {
		return nil, fmt.Errorf("describe task queue %s: %w", queue, err)
	}
	var ids []string
	for _, p := range resp.GetPollers() {
		if time.Since(p.GetLastAccessTime().AsTime()) <= LiveWithin && !slices.Contains(ids, p.GetIdentity()) {
			ids = append(ids, p.GetIdentity())
		}
	}
	return ids, nil
}
