package workflows

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/payload"
)

// reindexNamesChange is the change id (workflow.GetVersion) of the index
// rebuild's activity names: a run recorded before it schedules
// PrepareRestore, RestoreHour and FinishRestore (the names before issue 35
// called the rebuild "reindex"; a worker registers them as aliases,
// calls.Renamed), a run after it PrepareReindex, ReindexHour and
// FinishReindex.
const reindexNamesChange = "reindex-activity-names"

// ReindexResult is what the index holds after the rebuild.
type ReindexResult struct {
	Location string
	Resumed  bool // an unfinished restore went on
	// Hours and Events restored, with their seq range (the whole restore,
	// earlier runs of an unfinished one included).
	Hours             int
	Events            int64
	FirstSeq, LastSeq uint64
	// Resume is where capture goes on: the end of the last restored
	// transaction; Outcome says whether with or without a gap.
	Resume  binlogpos.Position
	Outcome string
	Gaps    []string `json:",omitempty"`
	// Failed names, with the reason, every archive file that could not be
	// read; the run then fails, after restoring the others.
	Failed []string `json:",omitempty"`
}

// Reindex rebuilds an empty index of a source from its archives:
// PrepareReindex (checks, begins, partitions), one ReindexHour per archive
// file, oldest first (each hour idempotent and recorded in the index, so a
// killed worker's run, or a new run, goes on at the next hour), then
// FinishReindex (history, gaps, the checkpoint). An archive file that
// cannot be read (BrokenArchive) is skipped and named; the run fails with
// the result as its details after rebuilding the others. It is registered
// under its name before issue 35 too, RestoreIndex (workers.RegisterWorkflows),
// for the runs and histories of that name.
func Reindex(ctx workflow.Context, in payload.ReindexInput) (ReindexResult, error) {
	progress := payload.ReindexProgress{Phase: "checking the index and the archives"}
	if err := workflow.SetQueryHandler(ctx, payload.ProgressQuery, func() (payload.ReindexProgress, error) { return progress, nil }); err != nil {
		return ReindexResult{}, err
	}
	long := workflow.WithActivityOptions(ctx, transferOptions)
	prepare, hour, finish := calls.PrepareReindex, calls.ReindexHour, calls.FinishReindex
	if workflow.GetVersion(ctx, reindexNamesChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		prepare, hour, finish = oldName(prepare), oldName(hour), oldName(finish)
	}
	var prep calls.PrepareReindexResult
	if err := workflow.ExecuteActivity(long, prepare, calls.PrepareReindexInput{
		Source: in.Source, ArchiveURL: in.ArchiveURL}).Get(ctx, &prep); err != nil {
		return ReindexResult{}, err
	}
	res := ReindexResult{Location: prep.Location, Resumed: prep.Resumed}
	progress.Phase, progress.HoursTotal = "restoring hours", len(prep.Hours)
	for _, h := range prep.Hours {
		var hr calls.ReindexHourResult
		err := workflow.ExecuteActivity(long, hour, calls.ReindexHourInput{
			Source: in.Source, ArchiveURL: in.ArchiveURL, Hour: h.Hour, Object: h.Object}).Get(ctx, &hr)
		var appErr *temporal.ApplicationError
		switch {
		case errors.As(err, &appErr) && appErr.Type() == payload.ErrBrokenArchive:
			res.Failed = append(res.Failed, appErr.Message())
		case err != nil:
			return res, err
		}
		progress.HoursDone++
		progress.Events += hr.Events
	}
	progress.Phase = "writing history and checkpoint"
	var fin calls.FinishReindexResult
	if err := workflow.ExecuteActivity(long, finish, calls.FinishReindexInput{
		Source: in.Source, ArchiveURL: in.ArchiveURL, Failed: res.Failed}).Get(ctx, &fin); err != nil {
		return res, err
	}
	res.Hours, res.Events, res.FirstSeq, res.LastSeq = fin.Hours, fin.Events, fin.FirstSeq, fin.LastSeq
	res.Resume, res.Outcome, res.Gaps = fin.Resume, fin.Outcome, fin.Gaps
	progress.Phase = "done"
	if len(res.Failed) > 0 {
		return res, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("reindex of %s: %d archive files could not be read (the other %d hours are rebuilt): %s",
				in.Source, len(res.Failed), res.Hours, strings.Join(res.Failed, "; ")),
			payload.ErrBrokenArchive, nil, res)
	}
	return res, nil
}

// oldName is the name activity name had before issue 35 (calls.Renamed),
// or name itself.
func oldName(name string) string {
	for old, now := range calls.Renamed {
		if now == name {
			return old
		}
	}
	return name
}
