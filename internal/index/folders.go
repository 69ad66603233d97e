package index

import (
	"context"
	"database/sql"
	"fmt"
	"time"
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

// FolderSpace is one folder of a worker and its free space when measured.
type FolderSpace struct {
	Worker string `json:"worker"` // the worker's identity (<pid>@<host>)
	Folder string `json:"folder"` // backup, work or dump
	Path   string `json:"path"`
	// Free is the bytes an unprivileged writer could still write; Error is
	// why the folder could not be measured ("" when it was).
	Free       uint64    `json:"free_bytes"`
	Error      string    `json:"error,omitempty"`
	MeasuredAt time.Time `json:"measured_at"`
}

// RecordFolderSpace replaces worker's folder rows with fs (each with its
// own MeasuredAt) and removes the rows of workers not heard of since
// FolderSpaceKeep before now, in one transaction. Recording the same fs
// again is a no-op.
func (s *Store) RecordFolderSpace(ctx context.Context, worker string, fs []FolderSpace, now time.Time) error {
	if worker == "" {
		return fmt.Errorf("record folder space: empty worker identity")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record folder space of %s: %w", worker, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "DELETE FROM folder_space WHERE worker = ? OR measured_at < ?",
		worker, now.Add(-FolderSpaceKeep).UTC()); err != nil {
		return fmt.Errorf("record folder space of %s: %w", worker, err)
	}
	for _, f := range fs {
		var free sql.NullInt64
		if f.Error == "" {
			free = sql.NullInt64{Int64: int64(min(f.Free, 1<<63-1)), Valid: true}
		}
		if _, err := tx.ExecContext(ctx, `REPLACE INTO folder_space (worker, folder, path, free_bytes, error, measured_at)
			VALUES (?, ?, ?, ?, ?, ?)`, worker, f.Folder, f.Path, free,
			sql.NullString{String: f.Error, Valid: f.Error != ""}, f.MeasuredAt.UTC()); err != nil {
			return fmt.Errorf("record folder space of %s, %s folder %s: %w", worker, f.Folder, f.Path, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record folder space of %s: %w", worker, err)
	}
	return nil
}

// FolderSpaces returns every worker's folders as last recorded, by worker,
// folder and path.
func (s *Store) FolderSpaces(ctx context.Context) ([]FolderSpace, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT worker, folder, path, free_bytes, error, measured_at
		FROM folder_space ORDER BY worker, folder, path`)
	if err != nil {
		return nil, fmt.Errorf("read folder space: %w", err)
	}
	defer rows.Close()
	var out []FolderSpace
	for rows.Next() {
		var f FolderSpace
		var free sql.NullInt64
		var msg sql.NullString
		if err := rows.Scan(&f.Worker, &f.Folder, &f.Path, &free, &msg, &f.MeasuredAt); err != nil {
			return nil, fmt.Errorf("read folder space: %w", err)
		}
		f.Free, f.Error = uint64(free.Int64), msg.String
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read folder space: %w", err)
	}
	return out, nil
}
