package workflows

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
)

// RestoreIndexWorkflowID is the fixed id of a source's restore-index: one
// at a time.
func RestoreIndexWorkflowID(source string) string { return "restore-index-" + source }

// RestoreIndexInput names the source and where its archives are ("": the
// worker's archive location).
type RestoreIndexInput struct {
	Source     string
	ArchiveURL string
}

// RestoreIndexResult is what the index holds after the restore.
type RestoreIndexResult struct {
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

// RestoreIndexProgress is what the "progress" query of a restore returns.
type RestoreIndexProgress struct {
	Phase      string
	HoursTotal int
	HoursDone  int
	Events     int64
}

// RestoreIndex rebuilds an empty index of a source from its archives:
// PrepareRestore (checks, begins, partitions), one RestoreHour per archive
// file, oldest first (each hour idempotent and recorded in the index, so a
// killed worker's run, or a new run, goes on at the next hour), then
// FinishRestore (history, gaps, the checkpoint). An archive file that
// cannot be read (BrokenArchive) is skipped and named; the run fails with
// the result as its details after restoring the others.
func RestoreIndex(ctx workflow.Context, in RestoreIndexInput) (RestoreIndexResult, error) {
	progress := RestoreIndexProgress{Phase: "checking the index and the archives"}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (RestoreIndexProgress, error) { return progress, nil }); err != nil {
		return RestoreIndexResult{}, err
	}
	long := workflow.WithActivityOptions(ctx, transferOptions)
	var prep activities.PrepareRestoreResult
	if err := workflow.ExecuteActivity(long, a.PrepareRestore, activities.PrepareRestoreInput{
		Source: in.Source, ArchiveURL: in.ArchiveURL}).Get(ctx, &prep); err != nil {
		return RestoreIndexResult{}, err
	}
	res := RestoreIndexResult{Location: prep.Location, Resumed: prep.Resumed}
	progress.Phase, progress.HoursTotal = "restoring hours", len(prep.Hours)
	for _, h := range prep.Hours {
		var hr activities.RestoreHourResult
		err := workflow.ExecuteActivity(long, a.RestoreHour, activities.RestoreHourInput{
			Source: in.Source, ArchiveURL: in.ArchiveURL, Hour: h.Hour, Object: h.Object}).Get(ctx, &hr)
		var appErr *temporal.ApplicationError
		switch {
		case errors.As(err, &appErr) && appErr.Type() == activities.ErrBrokenArchive:
			res.Failed = append(res.Failed, appErr.Message())
		case err != nil:
			return res, err
		}
		progress.HoursDone++
		progress.Events += hr.Events
	}
	progress.Phase = "writing history and checkpoint"
	var fin activities.FinishRestoreResult
	if err := workflow.ExecuteActivity(long, a.FinishRestore, activities.FinishRestoreInput{
		Source: in.Source, ArchiveURL: in.ArchiveURL, Failed: res.Failed}).Get(ctx, &fin); err != nil {
		return res, err
	}
	res.Hours, res.Events, res.FirstSeq, res.LastSeq = fin.Hours, fin.Events, fin.FirstSeq, fin.LastSeq
	res.Resume, res.Outcome, res.Gaps = fin.Resume, fin.Outcome, fin.Gaps
	progress.Phase = "done"
	if len(res.Failed) > 0 {
		return res, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("restore-index of %s: %d archive files could not be read (the other %d hours are restored): %s",
				in.Source, len(res.Failed), res.Hours, strings.Join(res.Failed, "; ")),
			activities.ErrBrokenArchive, nil, res)
	}
	return res, nil
}
