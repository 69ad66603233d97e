package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// restoreDrillsDDL records every restore drill of a source: when it
// started, the moment it restored and the cut that moment resolved to, the
// tables and rows it loaded and verified, its verdict ("ok" or "failed")
// with the failure's message, and how long it took.
const restoreDrillsDDL = `CREATE TABLE IF NOT EXISTS restore_drills (
  source VARCHAR(64) NOT NULL,
  started_at DATETIME(6) NOT NULL,
  finished_at DATETIME(6) NOT NULL,
  target VARCHAR(255) NOT NULL,
  moment TEXT NOT NULL,
  cut TEXT NOT NULL,
  snapshot VARCHAR(255) NOT NULL,
  tables_restored INT UNSIGNED NOT NULL,
  rows_restored BIGINT UNSIGNED NOT NULL,
  verdict VARCHAR(16) NOT NULL,
  failure TEXT NULL,
  PRIMARY KEY (source, started_at)
)` + tableOptions

// Drill verdicts.
const (
	DrillOK     = "ok"
	DrillFailed = "failed"
)

// Drill is the index's record of one restore drill of a source.
type Drill struct {
	Source              string
	StartedAt, Finished time.Time
	Target              string // the scratch server's address
	Moment              string // as asked ("latest", a time, seq:N, ...)
	Cut                 string // what the moment resolved to ("" when it failed before)
	Snapshot            string // the snapshot the restore started from
	Tables              int
	Rows                int64
	Verdict             string // DrillOK or DrillFailed
	Failure             string // why it failed ("" when ok)
}

// Took is how long the drill ran.
func (d Drill) Took() time.Duration { return d.Finished.Sub(d.StartedAt) }

// RecordDrill writes d, replacing a record of the same source and start
// (a retried write is the same record).
func (s *Store) RecordDrill(ctx context.Context, d Drill) error {
	if d.Verdict != DrillOK && d.Verdict != DrillFailed {
		return fmt.Errorf("record drill of %s: verdict %q is neither %s nor %s", d.Source, d.Verdict, DrillOK, DrillFailed)
	}
	_, err := s.db.ExecContext(ctx, `REPLACE INTO restore_drills
		(source, started_at, finished_at, target, moment, cut, snapshot, tables_restored, rows_restored, verdict, failure)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.Source, d.StartedAt.UTC(), d.Finished.UTC(), d.Target, d.Moment, d.Cut, d.Snapshot, d.Tables, d.Rows, d.Verdict,
		sql.NullString{String: d.Failure, Valid: d.Failure != ""})
	if err != nil {
		return fmt.Errorf("record drill of %s started %s: %w", d.Source, d.StartedAt.UTC().Format(time.RFC3339), err)
	}
	return nil
}

// LastDrill returns source's latest drill by start; ok is false when it
// has none.
func (s *Store) LastDrill(ctx context.Context, source string) (d Drill, ok bool, err error) {
	var failure sql.NullString
	err = s.db.QueryRowContext(ctx, `SELECT source, started_at, finished_at, target, moment, cut, snapshot, tables_restored,
		rows_restored, verdict, failure FROM restore_drills WHERE source = ? ORDER BY started_at DESC LIMIT 1`, source).
		Scan(&d.Source, &d.StartedAt, &d.Finished, &d.Target, &d.Moment, &d.Cut, &d.Snapshot, &d.Tables, &d.Rows, &d.Verdict, &failure)
	if errors.Is(err, sql.ErrNoRows) {
		return Drill{}, false, nil
	}
	if err != nil {
		return Drill{}, false, fmt.Errorf("read the last drill of %s: %w", source, err)
	}
	d.Failure = failure.String
	return d, true, nil
}
