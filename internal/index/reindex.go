package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/change"
)

// reindex rebuilds a source's index from its archive files: it starts
// (BeginReindex) only on an index that holds nothing of the source,
// restores hour by hour (ReindexHour: one transaction per hour, its archive
// record the mark that the hour is done), and ends (FinishReindex) by
// writing schema history, gaps, starts and the checkpoint in one
// transaction. Until then the source has no checkpoint.

// NotEmptyError is BeginReindex's refusal of an index that already holds
// something of the source.
type NotEmptyError struct {
	Source string
	What   string // what was found, e.g. "a capture checkpoint"
}

func (e *NotEmptyError) Error() string {
	return fmt.Sprintf("the index is not empty for source %s: it has %s; reindex only fills an empty index", e.Source, e.What)
}

// ReindexState is the record of a reindex of a source.
type ReindexState struct {
	Source, Location  string
	StartedAt         time.Time
	FinishedAt        time.Time // zero while unfinished
	Hours             int
	Events            int64
	FirstSeq, LastSeq uint64
	Failed            []string
	Outcome           string
}

// BeginReindex starts the restore of source from the archives at location.
// On an index with nothing of source (no checkpoint, events, schema
// history, gaps, starts, archive records) it records the restore as begun;
// when a restore of source from the same location is unfinished it lets it
// go on (resumed true). Anything else is a *NotEmptyError. It checks and
// records in one transaction that commits only while fence (source's
// capture lease, nil in tests) is held, so no capture can start between
// the check and the record: capture takes the same lease, then refuses
// while the record says the restore is unfinished (CheckNoReindex).
func (s *Store) BeginReindex(ctx context.Context, source, location string, fence *Lease) (resumed bool, err error) {
	fail := func(err error) (bool, error) { return false, fmt.Errorf("begin restore of %s: %w", source, err) }
	tx, err := s.Begin(ctx, source, fence)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	st, found, err := reindexState(ctx, tx.tx, source)
	if err != nil {
		return false, err
	}
	if found {
		switch {
		case !st.FinishedAt.IsZero():
			return false, &NotEmptyError{Source: source, What: "a finished restore from " + st.Location}
		case st.Location != location:
			return false, &NotEmptyError{Source: source, What: "an unfinished restore from another location, " + st.Location}
		}
		return true, nil
	}
	if what, err := holding(ctx, tx.tx, source); err != nil || what != "" {
		if err == nil {
			err = &NotEmptyError{Source: source, What: what}
		}
		return false, err
	}
	_, err = tx.tx.ExecContext(ctx, `INSERT INTO restores (source, location, started_at) VALUES (?, ?, ?)`,
		source, location, time.Now().UTC())
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1062 { // a racing start began it
		return true, nil
	}
	if err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return false, nil
}

// holding returns what the index holds of source, "" for nothing.
func holding(ctx context.Context, q rowQueryer, source string) (string, error) {
	for _, c := range []struct{ what, q string }{
		{"a capture checkpoint", "SELECT 1 FROM checkpoints WHERE source = ? LIMIT 1"},
		{"events", "SELECT 1 FROM event_chunks WHERE source = ? LIMIT 1"},
		{"schema history", "SELECT 1 FROM schema_history WHERE source = ? LIMIT 1"},
		{"capture gaps", "SELECT 1 FROM capture_gaps WHERE source = ? LIMIT 1"},
		{"capture starts", "SELECT 1 FROM capture_starts WHERE source = ? LIMIT 1"},
		{"archive records", "SELECT 1 FROM archives WHERE source = ? LIMIT 1"},
	} {
		var one int
		err := q.QueryRowContext(ctx, c.q, source).Scan(&one)
		if err == nil {
			return c.what, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return "", fmt.Errorf("look for %s of %s: %w", c.what, source, err)
		}
	}
	return "", nil
}

// ReindexStatus returns the record of source's index rebuild from its
// archives; found is false when the index was never rebuilt.
func (s *Store) ReindexStatus(ctx context.Context, source string) (st ReindexState, found bool, err error) {
	return reindexState(ctx, s.db, source)
}

// reindexState is ReindexStatus asked of q (the pool or a transaction).
func reindexState(ctx context.Context, q rowQueryer, source string) (st ReindexState, found bool, err error) {
	var finished sql.NullTime
	var failed, outcome sql.NullString
	err = q.QueryRowContext(ctx, `SELECT source, location, started_at, finished_at, hours, events, first_seq, last_seq, failed, outcome
		FROM restores WHERE source = ?`, source).Scan(&st.Source, &st.Location, &st.StartedAt, &finished, &st.Hours, &st.Events,
		&st.FirstSeq, &st.LastSeq, &failed, &outcome)
	if errors.Is(err, sql.ErrNoRows) {
		return ReindexState{}, false, nil
	}
	if err != nil {
		return ReindexState{}, false, fmt.Errorf("read restore of %s: %w", source, err)
	}
	st.FinishedAt, st.Outcome = finished.Time, outcome.String
	if failed.String != "" {
		st.Failed = strings.Split(failed.String, "\n")
	}
	return st, true, nil
}

// restoreBatch bounds the events packed and inserted at once by
// ReindexHour: capture's batch bounds.
const (
	restoreBatchEvents = 5000
	restoreBatchBytes  = 16 << 20
)

// ReindexHour stores the events of the archived hour a.Hour of a.Source
// and the archive's record a in one index transaction, so an hour is
// restored wholly or not at all, and its record says it is done. events
// must yield them in seq order, each committed in the hour; they are packed
// as capture packs them (PackEvents), in batches of capture's size. An hour
// already recorded is left as it is (done false). The events yielded must
// number a.Events. The transaction commits only while fence (source's
// capture lease, nil in tests) is held.
func (s *Store) ReindexHour(ctx context.Context, a change.Archive, fence *Lease, events func(yield func(*change.Event) error) error) (done bool, err error) {
	fail := func(err error) (bool, error) {
		return false, fmt.Errorf("restore %s of %s: %w", PartitionName(a.Hour), a.Source, err)
	}
	tx, err := s.Begin(ctx, a.Source, fence)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	var one int
	err = tx.tx.QueryRowContext(ctx, `SELECT 1 FROM archives WHERE source = ? AND hour = ? FOR UPDATE`, a.Source, change.HourTime(a.Hour)).Scan(&one)
	if err == nil {
		return false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return fail(err)
	}
	b := reindexBatcher{ctx: ctx, tx: tx, hour: a.Hour}
	if err := events(b.add); err != nil {
		return fail(err)
	}
	if err := b.flush(ctx); err != nil {
		return fail(err)
	}
	if b.n != a.Events {
		return fail(fmt.Errorf("%d events restored, the archive says %d", b.n, a.Events))
	}
	if err := recordArchive(ctx, tx.tx, a); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return true, nil
}

// reindexBatcher packs and inserts the events of one restored hour.
type reindexBatcher struct {
	ctx   context.Context
	tx    *Tx
	hour  uint32
	evs   []change.Event
	bytes int
	n     int64
	last  uint64
}

func (b *reindexBatcher) add(e *change.Event) error {
	if change.HourID(e.CommitTime) != b.hour {
		return fmt.Errorf("event seq %d committed at %s, outside the hour", e.Seq, e.CommitTime.Format(time.RFC3339Nano))
	}
	if e.Seq <= b.last {
		return fmt.Errorf("event seq %d follows seq %d", e.Seq, b.last)
	}
	b.last = e.Seq
	b.evs = append(b.evs, *e)
	b.bytes += len(e.Before) + len(e.After) + len(e.PK)
	b.n++
	if len(b.evs) >= restoreBatchEvents || b.bytes >= restoreBatchBytes {
		return b.flush(b.ctx)
	}
	return nil
}

func (b *reindexBatcher) flush(ctx context.Context) error {
	if len(b.evs) == 0 {
		return nil
	}
	p, err := PackEvents(b.evs)
	if err != nil {
		return err
	}
	err = b.tx.insertChunks(ctx, p)
	p.Release()
	clear(b.evs)
	b.evs, b.bytes = b.evs[:0], 0
	return err
}

// recordArchive is RecordArchive on q (a transaction).
func recordArchive(ctx context.Context, q interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}, a change.Archive) error {
	_, err := q.ExecContext(ctx, `INSERT INTO archives
		(source, hour, object, location, size, sha256, events, first_seq, last_seq, confirmed_at, dropped_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.Source, change.HourTime(a.Hour), a.Object, a.Location, a.Size, a.SHA256, a.Events, a.FirstSeq, a.LastSeq,
		nullTime(a.ConfirmedAt), nullTime(a.DroppedAt))
	return err
}
