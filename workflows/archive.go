package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/activities"
)

// ArchiveWorkflowID is the fixed id of a source's archive schedule; its
// runs get this id with the scheduled time appended, and the schedule's
// overlap policy keeps one open at a time.
func ArchiveWorkflowID(source string) string { return "archive-" + source }

// DefaultArchiveEvery is the interval of a source's archive schedule.
const DefaultArchiveEvery = time.Hour

// ArchiveInput names the source and how many hours the index keeps.
type ArchiveInput struct {
	Source string
	// IndexHours: hours that ended more recently stay in the index
	// (default activities.DefaultIndexHours).
	IndexHours int
}

// ArchiveResult is what one archive run did.
type ArchiveResult struct {
	// Location is the archive location; "" when the worker has none, and
	// then Reason says that nothing was archived or dropped.
	Location string
	Reason   string `json:",omitempty"`
	// Before is the start of the oldest hour the index keeps.
	Before  time.Time
	History *activities.ArchiveHistoryResult `json:",omitempty"`
	Hours   []activities.ArchiveHourResult
	// Events and Bytes are the totals of the files written.
	Events, Bytes int64
	// EmptyPartitions are the index's partitions of old hours without
	// events that were dropped.
	EmptyPartitions []string `json:",omitempty"`
}

// ArchiveProgress is what the "progress" query of an archive run returns.
type ArchiveProgress struct {
	Phase      string
	HoursTotal int
	HoursDone  int
	Events     int64
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
func Archive(ctx workflow.Context, in ArchiveInput) (ArchiveResult, error) {
	progress := ArchiveProgress{Phase: "planning"}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (ArchiveProgress, error) { return progress, nil }); err != nil {
		return ArchiveResult{}, err
	}
	short := workflow.WithActivityOptions(ctx, shortOptions(5*time.Minute))
	transfer := workflow.WithActivityOptions(ctx, transferOptions)
	var plan activities.PlanArchiveResult
	if err := workflow.ExecuteActivity(short, a.PlanArchive, activities.PlanArchiveInput{
		Source: in.Source, IndexHours: in.IndexHours, Now: workflow.Now(ctx)}).Get(ctx, &plan); err != nil {
		return ArchiveResult{}, err
	}
	res := ArchiveResult{Location: plan.Location, Reason: plan.Reason, Before: plan.Before}
	if plan.Location == "" {
		progress.Phase = "done: " + plan.Reason
		return res, nil
	}
	progress.Phase = "writing the history file"
	var hist activities.ArchiveHistoryResult
	if err := workflow.ExecuteActivity(transfer, a.ArchiveHistory, activities.ArchiveHistoryInput{Source: in.Source}).Get(ctx, &hist); err != nil {
		return res, err
	}
	res.History = &hist
	progress.Phase, progress.HoursTotal = "archiving hours", len(plan.Hours)
	for _, h := range plan.Hours {
		var hr activities.ArchiveHourResult
		if err := workflow.ExecuteActivity(transfer, a.ArchiveHour, activities.ArchiveHourInput{Source: in.Source, Hour: h.Hour}).Get(ctx, &hr); err != nil {
			return res, err
		}
		res.Hours = append(res.Hours, hr)
		res.Events += hr.Events
		res.Bytes += hr.Bytes
		progress.HoursDone++
		progress.Events += hr.Events
	}
	progress.Phase = "dropping empty partitions"
	var empty activities.DropEmptyPartitionsResult
	if err := workflow.ExecuteActivity(short, a.DropEmptyPartitions, activities.DropEmptyPartitionsInput{Before: plan.Before}).Get(ctx, &empty); err != nil {
		workflow.GetLogger(ctx).Warn("empty partitions not dropped", "error", err)
	}
	res.EmptyPartitions = empty.Dropped
	progress.Phase = "done"
	return res, nil
}
