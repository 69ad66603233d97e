package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/dbtrail/dbtrail/internal/archive"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/payload"
)

// archivedFile is one hour's archive file, written and confirmed.
type archivedFile struct {
	archive.HourFile
	indexEvents int64 // of its events, from the index
}

// archiveFile writes the hour's file, records it as not confirmed, uploads
// and confirms it.
func (a *Activities) archiveFile(ctx context.Context, source string, hour uint32, set func(any), log *slog.Logger) (archivedFile, error) {
	name := archive.ObjectName(source, change.HourTime(hour))
	stored, closeStored, err := a.storedArchive(ctx, source, hour, name)
	if err != nil {
		return archivedFile{}, err
	}
	step(set, log, hour, "write", 0)
	f, err := a.writeHourFile(ctx, source, hour, stored, set, log)
	closeStored()
	if err != nil {
		return f, err
	}
	if f.Events == 0 {
		return f, nil // nothing in the index, nothing stored: nothing to keep
	}
	rec := change.Archive{Source: source, Hour: hour, Object: name, Location: a.Remote.Location(), Size: f.Digest.Size,
		SHA256: f.Digest.SHA256, Events: f.Events, FirstSeq: f.FirstSeq, LastSeq: f.LastSeq}
	step(set, log, hour, "record", f.Events)
	if err := a.Index.RecordArchive(ctx, rec); err != nil {
		return f, err
	}
	step(set, log, hour, "upload", f.Events)
	if err := archive.Put(ctx, a.Remote, name, f.HourFile); err != nil {
		return f, err
	}
	step(set, log, hour, "confirm", f.Events)
	if err := archive.Confirm(ctx, a.Remote, name, f.HourFile); err != nil {
		return f, err
	}
	ok, err := a.Index.ConfirmArchive(ctx, source, hour, f.Digest.SHA256, time.Now())
	if err != nil {
		return f, err
	}
	if !ok {
		return f, fmt.Errorf("archive %s: its record names other content now (another run?)", name)
	}
	return f, nil
}

// storedArchive opens the archive file already stored for the hour, if any,
// as a Scan of its events (nil when there is none; archive.OpenStored). A
// file that fails its checks is BrokenArchive: it is neither overwritten
// nor is the hour dropped. A recorded file that is missing from the store
// is BrokenArchive too: its events are no longer anywhere.
func (a *Activities) storedArchive(ctx context.Context, source string, hour uint32, name string) (archive.Scan, func(), error) {
	scan, closeStored, err := archive.OpenStored(ctx, a.Remote, name, source, change.HourTime(hour))
	if err != nil {
		return nil, closeStored, brokenArchive(err)
	}
	if scan != nil {
		return func(fn func(change.Event) error) error { return brokenArchive(scan(fn)) }, closeStored, nil
	}
	rec, found, err := a.Index.ArchiveOf(ctx, source, hour)
	where := name + " in " + a.Remote.Location()
	if err != nil {
		return nil, closeStored, fmt.Errorf("archive %s: %w", where, err)
	}
	if found && rec.Confirmed() && !rec.DroppedAt.IsZero() {
		return nil, closeStored, nonRetryable(payload.ErrBrokenArchive, fmt.Errorf(
			"archive %s, recorded with %d events confirmed at %s, is missing: the events it held are in no other place; the hour is not rewritten",
			where, rec.Events, rec.ConfirmedAt.Format(time.RFC3339)))
	}
	return nil, closeStored, nil
}

// brokenArchive marks an *archive.CorruptError of a stored file as
// BrokenArchive; other errors pass unchanged.
func brokenArchive(err error) error {
	var ce *archive.CorruptError
	if errors.As(err, &ce) {
		return nonRetryable(payload.ErrBrokenArchive, fmt.Errorf("stored %w; it is neither rewritten nor is the hour dropped", err))
	}
	return err
}

// writeHourFile writes the hour's archive file in the work folder
// (archive.WriteHour): the stored file's events (if any) joined with the
// index's, each once, the index read ahead (archive.Prefetch).
func (a *Activities) writeHourFile(ctx context.Context, source string, hour uint32, stored archive.Scan,
	set func(any), log *slog.Logger) (archivedFile, error) {
	var f archivedFile
	fromIndex := archive.Prefetch(func(fn func(change.Event) error) error {
		return a.Index.HourEvents(ctx, source, hour, func(e change.Event) error {
			f.indexEvents++
			return fn(e)
		})
	})
	events := fromIndex
	if stored != nil {
		events = func(fn func(change.Event) error) error { return archive.MergeFileOrder(stored, fromIndex, fn) }
	}
	path := filepath.Join(a.archiveWorkDir(source), index.PartitionName(hour)+".parquet")
	var err error
	f.HourFile, err = archive.WriteHour(path, source, change.HourTime(hour), events, func(n int64) { step(set, log, hour, "write", n) })
	var ee *archive.EventError
	var ce *archive.ConflictError
	switch {
	case errors.As(err, &ce):
		return f, nonRetryable(payload.ErrArchiveConflict, fmt.Errorf("archive hour %s of %s: %w", index.PartitionName(hour), source, err))
	case errors.As(err, &ee):
		return f, badInput(fmt.Errorf("archive hour %s of %s: %w", index.PartitionName(hour), source, err))
	case err != nil:
		return f, fmt.Errorf("archive hour %s of %s: %w", index.PartitionName(hour), source, err)
	}
	return f, nil
}
