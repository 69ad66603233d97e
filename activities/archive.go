package activities

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/archive"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/payload"
)

// The archive moves hours of a source's events from the index to the
// worker's archive location (Activities.Remote), one Parquet file per hour
// (docs/archive.md). An hour leaves the index only once its file is
// confirmed in the store, and only while the index still holds exactly the
// events the file took from it.

// maxArchiveRounds bounds how often ArchiveHour writes an hour again
// because events landed in it meanwhile; the next run takes it up again.
const maxArchiveRounds = 3

// PlanArchive lists the hours of a source due for archiving: those that
// ended at least IndexHours (default DefaultIndexHours) before in.Now and
// whose events are all below the capture checkpoint. Without an archive
// location it lists none and says so. It writes nothing.
func (a *Activities) PlanArchive(ctx context.Context, in calls.PlanArchiveInput) (calls.PlanArchiveResult, error) {
	keep := in.IndexHours
	if keep <= 0 {
		keep = DefaultIndexHours
	}
	before := change.HourTime(change.HourID(in.Now.Add(-time.Duration(keep) * time.Hour)))
	res := calls.PlanArchiveResult{Before: before}
	if a.Remote == nil {
		res.Reason = "no archive location on this worker (--archive-url): the index keeps every hour, nothing is dropped"
		return res, nil
	}
	res.Location = a.Remote.Location()
	cp, ok, err := a.Index.LoadCheckpoint(ctx, in.Source)
	if err != nil {
		return res, err
	}
	if !ok {
		res.Reason = "capture of the source has no checkpoint yet"
		return res, nil
	}
	hours, err := a.Index.HoursBefore(ctx, in.Source, change.HourID(before))
	if err != nil {
		return res, err
	}
	for _, h := range hours {
		if h.LastSeq > cp.LastSeq {
			continue // not below the checkpoint (cannot happen for committed events)
		}
		res.Hours = append(res.Hours, calls.ArchiveHourPlan{Hour: change.HourTime(h.Hour), Events: h.Events})
	}
	return res, nil
}

// ArchiveHistory writes the source's history file (archive.History: schema
// history, capture gaps, capture starts) to the archive location, replacing
// the one there: it only ever grows, and the same content is not sent
// again. A lost index is rebuilt from it and the archive files.
func (a *Activities) ArchiveHistory(ctx context.Context, in calls.ArchiveHistoryInput) (calls.ArchiveHistoryResult, error) {
	if a.Remote == nil {
		return calls.ArchiveHistoryResult{}, nonRetryable(payload.ErrNoArchiveLocation, errors.New("no archive location on this worker (--archive-url)"))
	}
	h := archive.History{Source: in.Source}
	var err error
	if h.Schemas, err = a.Index.SchemaHistory(ctx, in.Source); err != nil {
		return calls.ArchiveHistoryResult{}, err
	}
	if h.Gaps, err = a.Index.Gaps(ctx, in.Source); err != nil {
		return calls.ArchiveHistoryResult{}, err
	}
	if h.Starts, err = a.Index.Starts(ctx, in.Source); err != nil {
		return calls.ArchiveHistoryResult{}, err
	}
	b, err := archive.MarshalHistory(h)
	if err != nil {
		return calls.ArchiveHistoryResult{}, err
	}
	name := archive.HistoryName(in.Source)
	if err := a.Remote.Put(ctx, name, bytes.NewReader(b), digest.Bytes(b)); err != nil {
		return calls.ArchiveHistoryResult{}, fmt.Errorf("archive history of %s to %s: %w", in.Source, a.Remote.Location(), err)
	}
	return calls.ArchiveHistoryResult{Object: name, Bytes: int64(len(b)), Schemas: len(h.Schemas), Gaps: len(h.Gaps), Starts: len(h.Starts)}, nil
}

// ArchiveHour archives one hour of a source: it writes the hour's archive
// file in the work folder (the events of the file already stored for the
// hour, if any, joined with the index's), records it as not confirmed,
// uploads it, confirms it (the stored object's size and sha256, its footer's
// count) and then drops the hour from the index, but only while the index
// still holds exactly the events the file took from it
// (index.Store.DropPartition); when events landed in the hour meanwhile it
// writes the hour again (at most maxArchiveRounds times; then the next run
// does). Every step is redone by a retry, and the same events give the same
// bytes, so a retry after a crash uploads nothing new. A stored file that
// is damaged (BrokenArchive) or disagrees with the index
// (ArchiveConflict) is left alone and nothing is dropped. It heartbeats
// ArchiveProgress.
func (a *Activities) ArchiveHour(ctx context.Context, in calls.ArchiveHourInput) (calls.ArchiveHourResult, error) {
	if a.Remote == nil {
		return calls.ArchiveHourResult{}, nonRetryable(payload.ErrNoArchiveLocation, errors.New("no archive location on this worker (--archive-url)"))
	}
	hour := change.HourID(in.Hour)
	res := calls.ArchiveHourResult{Hour: change.HourTime(hour), Object: archive.ObjectName(in.Source, change.HourTime(hour))}
	set, stop := keepAlive(ctx)
	defer stop()
	log := a.log(ctx).With(slog.String("source", in.Source), slog.String("hour", res.Hour.Format(time.RFC3339)))
	for res.Rounds < maxArchiveRounds {
		res.Rounds++
		f, err := a.archiveFile(ctx, in.Source, hour, set, log)
		if err != nil {
			return res, err
		}
		res.Events, res.IndexEvents, res.Bytes, res.SHA256 = f.Events, f.indexEvents, f.Digest.Size, f.Digest.SHA256
		step(set, log, hour, "drop", f.Events)
		dr, err := a.Index.DropPartition(ctx, in.Source, hour, f.indexEvents)
		var hc *index.HourChangedError
		if errors.As(err, &hc) {
			log.Info("events landed in the hour while it was archived; archiving it again",
				slog.Int64("archived", hc.Want), slog.Int64("in_index", hc.Got))
			continue
		}
		if err != nil {
			return res, err
		}
		if err := a.Index.MarkDropped(ctx, in.Source, hour, time.Now()); err != nil {
			return res, err
		}
		res.Partition, res.Deleted = dr.Partition, dr.Deleted
		os.Remove(f.Path)
		log.Info("hour archived", slog.String("object", res.Object), slog.Int64("events", res.Events),
			slog.Int64("bytes", res.Bytes), slog.String("partition_dropped", dr.Partition), slog.Int64("chunks_deleted", dr.Deleted))
		return res, nil
	}
	res.Kept = fmt.Sprintf("events kept landing in the hour while it was archived (%d rounds); the next run archives it again", res.Rounds)
	return res, nil
}

// DropEmptyPartitions drops the index's hourly partitions of hours before
// in.Before that hold nothing (hours without traffic). Without an archive
// location nothing is dropped.
func (a *Activities) DropEmptyPartitions(ctx context.Context, in calls.DropEmptyPartitionsInput) (calls.DropEmptyPartitionsResult, error) {
	if a.Remote == nil {
		return calls.DropEmptyPartitionsResult{}, nil
	}
	dropped, err := a.Index.DropEmptyPartitions(ctx, change.HourID(in.Before))
	return calls.DropEmptyPartitionsResult{Dropped: dropped}, err
}

// step reports one step of archiving an hour in the heartbeat and the log.
func step(set func(any), log *slog.Logger, hour uint32, name string, events int64) {
	set(calls.ArchiveProgress{Hour: change.HourTime(hour), Step: name, Events: events})
	log.Debug("archive step", slog.String("step", name), slog.Int64("events", events))
}

// archiveWorkDir is where the hour files of a source are written.
func (a *Activities) archiveWorkDir(source string) string {
	return filepath.Join(a.WorkDir, source, "archive")
}
