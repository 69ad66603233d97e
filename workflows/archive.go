package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/payload"
)

// ArchiveResult is what one archive run did.
type ArchiveResult struct {
	// Location is the archive location; "" when the worker has none, and
	// then Reason says that nothing was archived or dropped.
	Location string
	Reason   string `json:",omitempty"`
	// Before is the start of the oldest hour the index keeps.
	Before  time.Time
	History *calls.ArchiveHistoryResult `json:",omitempty"`
	Hours   []calls.ArchiveHourResult
	// Events and Bytes are the totals of the files written.
	Events, Bytes int64
	// EmptyPartitions are the index's partitions of old hours without
	// events that were dropped.
	EmptyPartitions []string `json:",omitempty"`
}

// Archive moves the hours of a source's events that ended IndexHours or
// more ago from the index to the worker's archive location: it writes the
// source's history file (schema history, gaps, starts), then archives each
// due hour, oldest first, one activity per hour (write, record, upload,
// confirm, drop: see activities.ArchiveHour), then drops the index's empty
// old partitions. A failing hour fails the run after its retries: the hours
// before it stay archived, nothing of it or after it is dropped, and the
// next run goes on. Without an archive location the run only reports that
// nothing is archived.
func Archive(ctx workflow.Context, in payload.ArchiveInput) (ArchiveResult, error) {
	progress := payload.ArchiveProgress{Phase: "planning"}
	if err := workflow.SetQueryHandler(ctx, payload.ProgressQuery, func() (payload.ArchiveProgress, error) { return progress, nil }); err != nil {
		return ArchiveResult{}, err
	}
	short := workflow.WithActivityOptions(ctx, shortOptions(5*time.Minute))
	transfer := workflow.WithActivityOptions(ctx, transferOptions)
	var plan calls.PlanArchiveResult
	if err := workflow.ExecuteActivity(short, calls.PlanArchive, calls.PlanArchiveInput{
		Source: in.Source, IndexHours: in.IndexHours, Now: workflow.Now(ctx)}).Get(ctx, &plan); err != nil {
		return ArchiveResult{}, err
	}
	res := ArchiveResult{Location: plan.Location, Reason: plan.Reason, Before: plan.Before}
	if plan.Location == "" {
		progress.Phase = "done: " + plan.Reason
		return res, nil
	}
	progress.Phase = "writing the history file"
	var hist calls.ArchiveHistoryResult
	if err := workflow.ExecuteActivity(transfer, calls.ArchiveHistory, calls.ArchiveHistoryInput{Source: in.Source}).Get(ctx, &hist); err != nil {
		return res, err
	}
	res.History = &hist
	progress.Phase, progress.HoursTotal = "archiving hours", len(plan.Hours)
	for _, h := range plan.Hours {
		var hr calls.ArchiveHourResult
		if err := workflow.ExecuteActivity(transfer, calls.ArchiveHour, calls.ArchiveHourInput{Source: in.Source, Hour: h.Hour}).Get(ctx, &hr); err != nil {
			return res, err
		}
		res.Hours = append(res.Hours, hr)
		res.Events += hr.Events
		res.Bytes += hr.Bytes
		progress.HoursDone++
		progress.Events += hr.Events
	}
	progress.Phase = "dropping empty partitions"
	var empty calls.DropEmptyPartitionsResult
	if err := workflow.ExecuteActivity(short, calls.DropEmptyPartitions, calls.DropEmptyPartitionsInput{Before: plan.Before}).Get(ctx, &empty); err != nil {
		workflow.GetLogger(ctx).Warn("empty partitions not dropped", "error", err)
	}
	res.EmptyPartitions = empty.Dropped
	progress.Phase = "done"
	return res, nil
}
