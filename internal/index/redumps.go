package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// redumpsDDL records every partial full backup of a source (a re-dump of
// some tables): when it started and finished, the partial snapshot it
// wrote, the tables it dumped ("schema.table", comma-separated), the rows
// it read from the source, and the seq of its position.
const redumpsDDL = `CREATE TABLE IF NOT EXISTS redumps (
  source VARCHAR(64) NOT NULL,
  started_at DATETIME(6) NOT NULL,
  finished_at DATETIME(6) NOT NULL,
  snapshot VARCHAR(255) NOT NULL,
  table_names MEDIUMTEXT NOT NULL,
  rows_read BIGINT UNSIGNED NOT NULL,
  seq BIGINT UNSIGNED NOT NULL,
  PRIMARY KEY (source, started_at)
)` + tableOptions

// Redump is the index's record of one partial full backup of a source.
type Redump struct {
	Source              string
	StartedAt, Finished time.Time
	Snapshot            string   // the partial snapshot's id
	Tables              []string // "schema.table", as dumped
	Rows                int64    // rows read from the source
	Seq                 uint64   // the seq of the dump's position
}

// Took is how long the re-dump ran.
func (r Redump) Took() time.Duration { return r.Finished.Sub(r.StartedAt) }

// RecordRedump writes r, replacing a record of the same source and start
// (a retried write is the same record).
func (s *Store) RecordRedump(ctx context.Context, r Redump) error {
	for _, t := range r.Tables {
		if t == "" || strings.Contains(t, ",") {
			return fmt.Errorf("record re-dump of %s: table name %q is empty or holds a comma", r.Source, t)
		}
	}
	_, err := s.db.ExecContext(ctx, `REPLACE INTO redumps (source, started_at, finished_at, snapshot, table_names, rows_read, seq)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		r.Source, r.StartedAt.UTC(), r.Finished.UTC(), r.Snapshot, strings.Join(r.Tables, ","), r.Rows, r.Seq)
	if err != nil {
		return fmt.Errorf("record re-dump of %s started %s: %w", r.Source, r.StartedAt.UTC().Format(time.RFC3339), err)
	}
	return nil
}

// LastRedump returns source's latest partial full backup by start; ok is
// false when it has none.
func (s *Store) LastRedump(ctx context.Context, source string) (r Redump, ok bool, err error) {
	var names string
	err = s.db.QueryRowContext(ctx, `SELECT source, started_at, finished_at, snapshot, table_names, rows_read, seq
		FROM redumps WHERE source = ? ORDER BY started_at DESC LIMIT 1`, source).
		Scan(&r.Source, &r.StartedAt, &r.Finished, &r.Snapshot, &names, &r.Rows, &r.Seq)
	if errors.Is(err, sql.ErrNoRows) {
		return Redump{}, false, nil
	}
	if err != nil {
		return Redump{}, false, fmt.Errorf("read the last re-dump of %s: %w", source, err)
	}
	if names != "" {
		r.Tables = strings.Split(names, ",")
	}
	return r, true, nil
}
