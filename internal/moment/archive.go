package moment

import (
	"context"
	"fmt"

	"github.com/dbtrail/dbtrail/internal/change"
)

// Archives are where the hourly archive files plug into the events seam
// (internal/archive writes and reads them; the Archive workflow moves them
// to the archive location and drops their hours from the index). An ArchiveStore lists a
// source's archived hours and opens one; ArchiveEvents reads them as an
// Events, and Merge(IndexEvents{…}, ArchiveEvents{…}) reads the index and
// the archives as one, by seq, each event once.

// ArchiveHour is one archived hour of one source, as the archive store
// lists it: its file's name (for errors) and the seqs its events span.
type ArchiveHour struct {
	Source   string
	Hour     uint32 // change.HourID of the hour
	Name     string
	FirstSeq uint64
	LastSeq  uint64
	Events   int64 // the events the file holds
}

// HourFile is an opened archive file whose checksum was checked (a missing
// file, or one that fails its checksum, never opens: the error names it).
type HourFile interface {
	// TableEvents passes the events of one table in seq order (an
	// archive.Reader's TableEvents).
	TableEvents(schemaName, table string, fn func(change.Event) error) error
	Close() error
}

// ArchiveStore lists and opens a source's archived hours (local folder or
// object storage).
type ArchiveStore interface {
	// Hours lists the archived hours of source holding events with
	// after < seq <= upto, in any order; upto 0 means no upper bound.
	Hours(ctx context.Context, source string, after, upto uint64) ([]ArchiveHour, error)
	// Open opens one hour's file.
	Open(ctx context.Context, h ArchiveHour) (HourFile, error)
}

// ArchiveEvents reads events from archived hours. Each hour is opened only
// when the merge by seq reaches its first seq, and closed when read.
type ArchiveEvents struct{ Store ArchiveStore }

// TableEvents merges the hours that overlap (after, upto] by seq.
func (a ArchiveEvents) TableEvents(ctx context.Context, source, schemaName, table string, after, upto uint64, fn func(change.Event) error) error {
	hours, err := a.Store.Hours(ctx, source, after, upto)
	if err != nil {
		return fmt.Errorf("archived hours of %s: %w", source, err)
	}
	return mergeStreams(a.hourStreams(ctx, hours, schemaName, table, func(e change.Event) bool {
		return e.Seq > after && (upto == 0 || e.Seq <= upto)
	}), fn)
}

// KeyEvents reads every archived hour of the table and keeps the events of
// key (before or after).
func (a ArchiveEvents) KeyEvents(ctx context.Context, source, schemaName, table, key string, fn func(change.Event) error) error {
	hours, err := a.Store.Hours(ctx, source, 0, 0)
	if err != nil {
		return fmt.Errorf("archived hours of %s: %w", source, err)
	}
	return mergeStreams(a.hourStreams(ctx, hours, schemaName, table, func(e change.Event) bool {
		return e.PK == key || e.PKBefore == key
	}), fn)
}

// hourStreams is one stream per hour, its lower bound the hour's first seq.
func (a ArchiveEvents) hourStreams(ctx context.Context, hours []ArchiveHour, schemaName, table string, keep func(change.Event) bool) []stream {
	out := make([]stream, len(hours))
	for i, h := range hours {
		out[i] = stream{from: h.FirstSeq, each: func(yield func(change.Event) error) (err error) {
			f, err := a.Store.Open(ctx, h)
			if err != nil {
				return fmt.Errorf("archive %s: %w", h.Name, err)
			}
			defer func() {
				if cerr := f.Close(); err == nil && cerr != nil {
					err = fmt.Errorf("archive %s: %w", h.Name, cerr)
				}
			}()
			return f.TableEvents(schemaName, table, func(e change.Event) error {
				if !keep(e) {
					return nil
				}
				return yield(e)
			})
		}}
	}
	return out
}
