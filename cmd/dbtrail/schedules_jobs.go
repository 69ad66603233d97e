package main

import (
	"fmt"
	"time"

	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// verifySchedule is the scheduled verify of source's current snapshot
// every interval; an interval of 0 is the spec that deletes it.
func verifySchedule(source, taskQueue string, every time.Duration) (temporalclient.ScheduleSpec, error) {
	spec := temporalclient.ScheduleSpec{ID: workflows.VerifyWorkflowID(source), Every: every, Workflow: "Verify", TaskQueue: taskQueue,
		Args: []any{workflows.VerifyInput{Source: source, Snapshot: "current"}}, Attrs: jobs.SourceAttrs(source)}
	if every != 0 && every < time.Hour {
		return spec, fmt.Errorf("--verify-every %s: the shortest verify interval is 1h (a verify reads every table on the source)", every)
	}
	return spec, nil
}

// retentionSchedule is the scheduled retention of source every interval;
// an interval of 0 is the spec that deletes it. It carries no policy: the
// worker that runs it applies its own.
func retentionSchedule(source, taskQueue string, every time.Duration) (temporalclient.ScheduleSpec, error) {
	spec := temporalclient.ScheduleSpec{ID: workflows.RetentionWorkflowID(source), Every: every, Workflow: "Retention", TaskQueue: taskQueue,
		Args: []any{workflows.RetentionInput{Source: source}}, Attrs: jobs.SourceAttrs(source)}
	if every != 0 && every < time.Minute {
		return spec, fmt.Errorf("--retention-every %s: the shortest retention interval is 1m", every)
	}
	return spec, nil
}
