package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
)

// HourCount is one hour of a source's events in the index.
type HourCount struct {
	Hour              uint32
	Events            int64
	FirstSeq, LastSeq uint64
}

// RecordArchive writes the record of a.Source's hour a.Hour, replacing the
// one there. A zero ConfirmedAt records the file as not confirmed (about to
// be uploaded), unless the existing record names the same content (sha256)
// and is confirmed: that content is on the store already, and a rerun that
// writes the same bytes again (after a crash between the hour's drop and
// its record) must not make a dropped hour's only copy look unconfirmed.
// The DroppedAt of an existing record is kept when a's is zero.
func (s *Store) RecordArchive(ctx context.Context, a change.Archive) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO archives
		(source, hour, object, location, size, sha256, events, first_seq, last_seq, confirmed_at, dropped_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON DUPLICATE KEY UPDATE
		confirmed_at = IF(sha256 = VALUES(sha256) AND object = VALUES(object) AND location = VALUES(location),
			COALESCE(VALUES(confirmed_at), confirmed_at), VALUES(confirmed_at)),
		object = VALUES(object), location = VALUES(location), size = VALUES(size),
		sha256 = VALUES(sha256), events = VALUES(events), first_seq = VALUES(first_seq), last_seq = VALUES(last_seq),
		dropped_at = COALESCE(VALUES(dropped_at), dropped_at)`,
		a.Source, change.HourTime(a.Hour), a.Object, a.Location, a.Size, a.SHA256, a.Events, a.FirstSeq, a.LastSeq,
		nullTime(a.ConfirmedAt), nullTime(a.DroppedAt))
	if err != nil {
		return fmt.Errorf("record archive %s %s: %w", a.Source, PartitionName(a.Hour), err)
	}
	return nil
}

// ConfirmArchive marks the record of source's hour confirmed at at, if it
// still names the content sha256 (a newer file recorded meanwhile stays
// unconfirmed). It reports whether the record was confirmed.
func (s *Store) ConfirmArchive(ctx context.Context, source string, hour uint32, sha256 string, at time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE archives SET confirmed_at = ? WHERE source = ? AND hour = ? AND sha256 = ?`,
		at.UTC(), source, change.HourTime(hour), sha256)
	if err != nil {
		return false, fmt.Errorf("confirm archive %s %s: %w", source, PartitionName(hour), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("confirm archive %s %s: %w", source, PartitionName(hour), err)
	}
	if n == 0 { // same confirmed_at already set, or another sha256
		a, ok, err := s.ArchiveOf(ctx, source, hour)
		return ok && a.SHA256 == sha256 && a.Confirmed(), err
	}
	return true, nil
}

// MarkDropped records that the events of source's hour left the index at at.
func (s *Store) MarkDropped(ctx context.Context, source string, hour uint32, at time.Time) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE archives SET dropped_at = ? WHERE source = ? AND hour = ?`,
		at.UTC(), source, change.HourTime(hour)); err != nil {
		return fmt.Errorf("mark archive %s %s dropped: %w", source, PartitionName(hour), err)
	}
	return nil
}

// ForgetArchive removes the record of source's hour: retention deleted its
// file from the store, so no reader lists the hour again.
func (s *Store) ForgetArchive(ctx context.Context, source string, hour uint32) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM archives WHERE source = ? AND hour = ?`, source, change.HourTime(hour)); err != nil {
		return fmt.Errorf("forget archive %s %s: %w", source, PartitionName(hour), err)
	}
	return nil
}

const archiveCols = `source, hour, object, location, size, sha256, events, first_seq, last_seq, confirmed_at, dropped_at`

// ArchiveOf returns the record of source's hour; found is false when there
// is none.
func (s *Store) ArchiveOf(ctx context.Context, source string, hour uint32) (a change.Archive, found bool, err error) {
	as, err := s.queryArchives(ctx, `SELECT `+archiveCols+` FROM archives WHERE source = ? AND hour = ?`, source, change.HourTime(hour))
	if err != nil || len(as) == 0 {
		return change.Archive{}, false, err
	}
	return as[0], true, nil
}

// Archives returns the archive records of source, oldest hour first.
func (s *Store) Archives(ctx context.Context, source string) ([]change.Archive, error) {
	return s.queryArchives(ctx, `SELECT `+archiveCols+` FROM archives WHERE source = ? ORDER BY hour`, source)
}

func (s *Store) queryArchives(ctx context.Context, q string, args ...any) ([]change.Archive, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read archives: %w", err)
	}
	defer rows.Close()
	var out []change.Archive
	for rows.Next() {
		var a change.Archive
		var hour time.Time
		var confirmed, dropped sql.NullTime
		if err := rows.Scan(&a.Source, &hour, &a.Object, &a.Location, &a.Size, &a.SHA256, &a.Events,
			&a.FirstSeq, &a.LastSeq, &confirmed, &dropped); err != nil {
			return nil, fmt.Errorf("read archives: %w", err)
		}
		a.Hour, a.ConfirmedAt, a.DroppedAt = change.HourID(hour), confirmed.Time, dropped.Time
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read archives: %w", err)
	}
	return out, nil
}

// HoursBefore returns the hours before hour (an HourID) in which source has
// events in the index, oldest first, with their counts and seq ranges, from
// chunk headers alone.
func (s *Store) HoursBefore(ctx context.Context, source string, hour uint32) ([]HourCount, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT hour_id, SUM(n), MIN(first_seq), MAX(last_seq) FROM event_chunks
		WHERE source = ? AND hour_id < ? GROUP BY hour_id ORDER BY hour_id`, source, hour)
	if err != nil {
		return nil, fmt.Errorf("hours of %s before %s: %w", source, PartitionName(hour), err)
	}
	defer rows.Close()
	var out []HourCount
	for rows.Next() {
		var h HourCount
		if err := rows.Scan(&h.Hour, &h.Events, &h.FirstSeq, &h.LastSeq); err != nil {
			return nil, fmt.Errorf("hours of %s before %s: %w", source, PartitionName(hour), err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("hours of %s before %s: %w", source, PartitionName(hour), err)
	}
	return out, nil
}

// CountHour returns how many events of source committed in hour the index
// holds, from chunk headers.
func (s *Store) CountHour(ctx context.Context, source string, hour uint32) (int64, error) {
	var n int64
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(n), 0) FROM event_chunks WHERE source = ? AND hour_id = ?`,
		source, hour).Scan(&n); err != nil {
		return 0, fmt.Errorf("count events of %s %s: %w", source, PartitionName(hour), err)
	}
	return n, nil
}

// Size is the disk space of the index's events: InnoDB's data and index
// length of event_chunks (all sources), an estimate the server keeps.
func (s *Store) Size(ctx context.Context) (int64, error) {
	var n sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?`, chunksTable).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("index size: %w", err)
	}
	return n.Int64, nil
}

// nullTime maps the zero time to SQL NULL, others to UTC.
func nullTime(t time.Time) sql.NullTime {
	return sql.NullTime{Time: t.UTC(), Valid: !t.IsZero()}
}
