package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
)

// captureSamplesDDL holds capture's state of a source sampled over time
// (docs/index-schema.md): the checkpoint's last commit time and seq as the
// capture process saw them, stamped with the index server's time, so a
// reader elsewhere (the console's lag and events/s plots) sees the last
// hours of any source, from before it started. Rows older than
// CaptureSampleKeep are removed by the next record of the source.
const captureSamplesDDL = `CREATE TABLE IF NOT EXISTS capture_samples (
  source VARCHAR(64) NOT NULL,
  sampled_at DATETIME(6) NOT NULL,
  last_commit_ts DATETIME(6) NULL,
  last_seq BIGINT UNSIGNED NOT NULL,
  PRIMARY KEY (source, sampled_at)
)` + tableOptions

// CaptureSampleKeep is how long capture samples are kept.
const CaptureSampleKeep = 7 * 24 * time.Hour

// ErrNoCaptureSamples is CaptureSamples' error when the index predates
// capture_samples (schema version < 10: no process of this release ran
// Init).
var ErrNoCaptureSamples = errors.New("the index has no capture_samples table yet (schema version < 10): no process of this release has started")

// CaptureSample is capture's state of a source at one time: its
// checkpoint's last commit time (zero before the first captured commit)
// and last seq.
type CaptureSample struct {
	At         time.Time `json:"at"`
	LastCommit time.Time `json:"last_commit,omitzero"`
	LastSeq    uint64    `json:"last_seq"`
}

// Lag is the time from the last captured commit to the sample, false
// before the first captured commit.
func (c CaptureSample) Lag() (time.Duration, bool) {
	if c.LastCommit.IsZero() {
		return 0, false
	}
	return c.At.Sub(c.LastCommit), true
}

// RecordCaptureSample records source's checkpoint as it is now (nothing
// when it has none yet) and removes its samples older than
// CaptureSampleKeep. Recording twice within the same microsecond keeps
// one.
func (s *Store) RecordCaptureSample(ctx context.Context, source string) error {
	if _, err := s.db.ExecContext(ctx, `INSERT IGNORE INTO capture_samples (source, sampled_at, last_commit_ts, last_seq)
		SELECT source, UTC_TIMESTAMP(6), last_commit_ts, last_seq FROM checkpoints WHERE source = ?`, source); err != nil {
		return fmt.Errorf("record a capture sample of %s: %w", source, err)
	}
	if _, err := s.db.ExecContext(ctx, "DELETE FROM capture_samples WHERE source = ? AND sampled_at < UTC_TIMESTAMP(6) - INTERVAL ? SECOND",
		source, int64(CaptureSampleKeep/time.Second)); err != nil {
		return fmt.Errorf("forget old capture samples of %s: %w", source, err)
	}
	return nil
}

// CaptureSamples returns source's samples of the last span, oldest first,
// in UTC.
func (s *Store) CaptureSamples(ctx context.Context, source string, span time.Duration) ([]CaptureSample, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT sampled_at, last_commit_ts, last_seq FROM capture_samples
		WHERE source = ? AND sampled_at >= UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND ORDER BY sampled_at`, source, span.Microseconds())
	if me := (*mysql.MySQLError)(nil); errors.As(err, &me) && me.Number == 1146 {
		return nil, fmt.Errorf("read capture samples of %s: %w", source, ErrNoCaptureSamples)
	}
	if err != nil {
		return nil, fmt.Errorf("read capture samples of %s: %w", source, err)
	}
	defer rows.Close()
	var out []CaptureSample
	for rows.Next() {
		var c CaptureSample
		var last sql.NullTime
		if err := rows.Scan(&c.At, &last, &c.LastSeq); err != nil {
			return nil, fmt.Errorf("read capture samples of %s: %w", source, err)
		}
		c.At = c.At.UTC()
		if last.Valid {
			c.LastCommit = last.Time.UTC()
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read capture samples of %s: %w", source, err)
	}
	return out, nil
}
