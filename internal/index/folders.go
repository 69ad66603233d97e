package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
)

// folderSpaceDDL holds the free space of every worker's folders as the
// worker last measured it, so that `dbtrail status` and the API's status,
// which run elsewhere, can show it. A worker replaces its own rows at every
// measure; rows of a worker not heard of for FolderSpaceKeep are removed by
// the next record of any worker.
const folderSpaceDDL = `CREATE TABLE IF NOT EXISTS folder_space (
  worker VARBINARY(255) NOT NULL,
  folder VARBINARY(16) NOT NULL,
  path VARBINARY(2048) NOT NULL,
  free_bytes BIGINT UNSIGNED NULL,
  error TEXT NULL,
  measured_at DATETIME(6) NOT NULL,
  PRIMARY KEY (worker, folder, path)
)` + tableOptions

// FolderSpaceKeep is how long the folder rows of a worker that stopped
// recording are kept.
const FolderSpaceKeep = 7 * 24 * time.Hour

// ErrNoFolderSpace is FolderSpaces' error when the index predates
// folder_space (schema version < 8: no worker of this release ran Init).
var ErrNoFolderSpace = errors.New("the index has no folder_space table yet (schema version < 8): no worker of this release has started")

// FolderSpace is one folder of a worker and its free space when measured.
type FolderSpace struct {
	Worker string `json:"worker"` // the worker's identity (<pid>@<host>)
	Folder string `json:"folder"` // backup, work or dump
	Path   string `json:"path"`
	// Free is the bytes an unprivileged writer could still write; Error is
	// why the folder could not be measured ("" when it was).
	Free  uint64 `json:"free_bytes"`
	Error string `json:"error,omitempty"`
	// MeasuredAt is when the record reached the index, by the index
	// server's clock, and Age how long ago that was by the same clock
	// (read by FolderSpaces), so no other machine's clock is involved.
	MeasuredAt time.Time     `json:"measured_at"`
	Age        time.Duration `json:"-"`
}

// RecordFolderSpace replaces worker's folder rows with fs, stamped with
// the index server's time, and removes the rows of workers not heard of
// for FolderSpaceKeep, in one READ COMMITTED transaction (no gap locks:
// workers recording at once do not wait on each other). Recording the
// same fs again changes only the stamps; a nil fs removes worker's rows
// (a worker that stops).
func (s *Store) RecordFolderSpace(ctx context.Context, worker string, fs []FolderSpace) error {
	if worker == "" {
		return fmt.Errorf("record folder space: empty worker identity")
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return fmt.Errorf("record folder space of %s: %w", worker, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "DELETE FROM folder_space WHERE worker = ?", worker); err != nil {
		return fmt.Errorf("record folder space of %s: %w", worker, err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM folder_space WHERE measured_at < UTC_TIMESTAMP(6) - INTERVAL ? SECOND",
		int64(FolderSpaceKeep/time.Second)); err != nil {
		return fmt.Errorf("record folder space of %s: forget silent workers: %w", worker, err)
	}
	for _, f := range fs {
		var free sql.NullInt64
		if f.Error == "" {
			free = sql.NullInt64{Int64: int64(min(f.Free, 1<<63-1)), Valid: true}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO folder_space (worker, folder, path, free_bytes, error, measured_at)
			VALUES (?, ?, ?, ?, ?, UTC_TIMESTAMP(6))`, worker, f.Folder, f.Path, free,
			sql.NullString{String: f.Error, Valid: f.Error != ""}); err != nil {
			return fmt.Errorf("record folder space of %s, %s folder %s: %w", worker, f.Folder, f.Path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record folder space of %s: %w", worker, err)
	}
	return nil
}

// FolderSpaces returns every worker's folders as last recorded, by worker,
// folder and path, each with its Age; ErrNoFolderSpace (wrapped) when the
// index predates them.
func (s *Store) FolderSpaces(ctx context.Context) ([]FolderSpace, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT worker, folder, path, free_bytes, error, measured_at,
		TIMESTAMPDIFF(MICROSECOND, measured_at, UTC_TIMESTAMP(6))
		FROM folder_space ORDER BY worker, folder, path`)
	if me := (*mysql.MySQLError)(nil); errors.As(err, &me) && me.Number == 1146 {
		return nil, fmt.Errorf("read folder space: %w", ErrNoFolderSpace)
	}
	if err != nil {
		return nil, fmt.Errorf("read folder space: %w", err)
	}
	defer rows.Close()
	var out []FolderSpace
	for rows.Next() {
		var f FolderSpace
		var free sql.NullInt64
		var msg sql.NullString
		var ageMicros int64
		if err := rows.Scan(&f.Worker, &f.Folder, &f.Path, &free, &msg, &f.MeasuredAt, &ageMicros); err != nil {
			return nil, fmt.Errorf("read folder space: %w", err)
		}
		f.Free, f.Error, f.Age = uint64(free.Int64), msg.String, time.Duration(ageMicros)*time.Microsecond
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read folder space: %w", err)
	}
	return out, nil
}
