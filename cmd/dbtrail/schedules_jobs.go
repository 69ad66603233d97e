package main

import (
	"time"

	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
)

// verifySchedule is the scheduled verify of source's current snapshot
// every interval; an interval of 0 is the spec that deletes it.
func verifySchedule(source, taskQueue string, every time.Duration) (temporalclient.ScheduleSpec, error) {
	sc := payload.ScheduleNamed("verify")
	return scheduleSpec(sc, source, taskQueue, every, payload.VerifyInput{Source: source, Snapshot: "current"}),
		sc.CheckEvery("--verify-every", every)
}

// retentionSchedule is the scheduled retention of source every interval;
// an interval of 0 is the spec that deletes it. It carries no policy: the
// worker that runs it applies its own.
func retentionSchedule(source, taskQueue string, every time.Duration) (temporalclient.ScheduleSpec, error) {
	sc := payload.ScheduleNamed("retention")
	return scheduleSpec(sc, source, taskQueue, every, payload.RetentionInput{Source: source}),
		sc.CheckEvery("--retention-every", every)
}
