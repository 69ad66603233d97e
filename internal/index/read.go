package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// LoadCheckpoint returns the checkpoint of source; found is false (and the
// error nil) when capture of source never committed one.
func (s *Store) LoadCheckpoint(ctx context.Context, source string) (c change.Checkpoint, found bool, err error) {
	var gtid, gtidSet sql.NullString
	var last sql.NullTime
	err = s.db.QueryRowContext(ctx, `SELECT source, binlog_file, binlog_pos, gtid, gtid_set, last_seq, last_commit_ts, updated_at
		FROM checkpoints WHERE source = ?`, source).
		Scan(&c.Source, &c.BinlogFile, &c.BinlogPos, &gtid, &gtidSet, &c.LastSeq, &last, &c.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return change.Checkpoint{}, false, nil
	}
	if err != nil {
		return change.Checkpoint{}, false, fmt.Errorf("load checkpoint %s: %w", source, err)
	}
	c.GTID, c.GTIDSet = gtid.String, gtidSet.String
	if last.Valid {
		c.LastCommit = last.Time
	}
	return c, true, nil
}

const schemaCols = `source, schema_name, table_name, version, seq, binlog_file, binlog_pos, ddl, definition, created_at`

// SchemaHistory returns every table version of source, ordered by seq, then
// schema, table and version: the order in which they apply to the stream.
func (s *Store) SchemaHistory(ctx context.Context, source string) ([]change.SchemaVersion, error) {
	vs, err := s.querySchemas(ctx, `SELECT `+schemaCols+` FROM schema_history WHERE source = ?
		ORDER BY seq, schema_name, table_name, version`, source)
	if err != nil {
		return nil, fmt.Errorf("schema history %s: %w", source, err)
	}
	return vs, nil
}

// LatestSchemas returns the newest version of every table of source, a drop
// (nil Definition) included, ordered by schema and table.
func (s *Store) LatestSchemas(ctx context.Context, source string) ([]change.SchemaVersion, error) {
	vs, err := s.querySchemas(ctx, `SELECT `+schemaCols+` FROM schema_history h
		WHERE source = ? AND version = (SELECT MAX(version) FROM schema_history m
			WHERE m.source = h.source AND m.schema_name = h.schema_name AND m.table_name = h.table_name)
		ORDER BY schema_name, table_name`, source)
	if err != nil {
		return nil, fmt.Errorf("latest schemas %s: %w", source, err)
	}
	return vs, nil
}

func (s *Store) querySchemas(ctx context.Context, q string, args ...any) ([]change.SchemaVersion, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []change.SchemaVersion
	for rows.Next() {
		var v change.SchemaVersion
		var def sql.NullString
		if err := rows.Scan(&v.Source, &v.Schema, &v.Table, &v.Version, &v.Seq, &v.BinlogFile, &v.BinlogPos,
			&v.DDL, &def, &v.CreatedAt); err != nil {
			return nil, err
		}
		if def.Valid {
			v.Definition = new(schema.Table)
			if err := json.Unmarshal([]byte(def.String), v.Definition); err != nil {
				return nil, fmt.Errorf("definition of %s.%s v%d: %w", v.Schema, v.Table, v.Version, err)
			}
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// RecordGap stores g (its ID is ignored) and returns the new gap's id. A zero
// DetectedAt is set to now.
func (s *Store) RecordGap(ctx context.Context, g change.Gap) (int64, error) {
	if g.DetectedAt.IsZero() {
		g.DetectedAt = time.Now()
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO capture_gaps
		(source, from_file, from_pos, from_gtid, to_file, to_pos, reason, detected_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		g.Source, g.FromFile, g.FromPos, nullString(g.FromGTID), g.ToFile, g.ToPos, g.Reason, g.DetectedAt.UTC())
	if err != nil {
		return 0, fmt.Errorf("record gap %s %s:%d..%s:%d: %w", g.Source, g.FromFile, g.FromPos, g.ToFile, g.ToPos, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("record gap %s: %w", g.Source, err)
	}
	return id, nil
}

// Gaps returns the capture gaps of source, oldest first.
func (s *Store) Gaps(ctx context.Context, source string) ([]change.Gap, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, source, from_file, from_pos, from_gtid, to_file, to_pos, reason, detected_at
		FROM capture_gaps WHERE source = ? ORDER BY id`, source)
	if err != nil {
		return nil, fmt.Errorf("gaps %s: %w", source, err)
	}
	defer rows.Close()
	var out []change.Gap
	for rows.Next() {
		var g change.Gap
		var from sql.NullString
		if err := rows.Scan(&g.ID, &g.Source, &g.FromFile, &g.FromPos, &from, &g.ToFile, &g.ToPos, &g.Reason, &g.DetectedAt); err != nil {
			return nil, fmt.Errorf("gaps %s: %w", source, err)
		}
		g.FromGTID = from.String
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("gaps %s: %w", source, err)
	}
	return out, nil
}

const eventCols = `seq, commit_ts, binlog_file, end_pos, gtid, schema_name, table_name, op, pk, pk_before, schema_version, before_image, after_image`

func scanEvent(rows *sql.Rows, e *change.Event) error {
	var gtid sql.NullString
	var op string
	var pk, pkBefore []byte
	if err := rows.Scan(&e.Seq, &e.CommitTime, &e.BinlogFile, &e.EndPos, &gtid, &e.Schema, &e.Table, &op, &pk, &pkBefore,
		&e.SchemaVersion, &e.Before, &e.After); err != nil {
		return err
	}
	e.GTID, e.PK, e.PKBefore = gtid.String, string(pk), string(pkBefore)
	if len(op) == 1 {
		e.Op = change.Op(op[0])
	}
	return nil
}

// TableChanges calls fn with every change of one table of source with
// afterSeq < seq <= uptoSeq, in key order (pk bytes, then seq): the last call
// for a key is its newest change in the window. It reads the events view, so
// the server unpacks and sorts (spilling to disk when it must); rows are
// streamed, never all held in memory. An error from fn stops the scan and is
// returned as is.
func (s *Store) TableChanges(ctx context.Context, source, schemaName, table string, afterSeq, uptoSeq uint64, fn func(change.Event) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT `+eventCols+` FROM events
		WHERE source = ? AND schema_name = ? AND table_name = ? AND seq > ? AND seq <= ?
		ORDER BY pk, seq`, source, schemaName, table, afterSeq, uptoSeq)
	if err != nil {
		return fmt.Errorf("table changes %s.%s (%d, %d]: %w", schemaName, table, afterSeq, uptoSeq, err)
	}
	defer rows.Close()
	for rows.Next() {
		var e change.Event
		if err := scanEvent(rows, &e); err != nil {
			return fmt.Errorf("table changes %s.%s (%d, %d]: %w", schemaName, table, afterSeq, uptoSeq, err)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("table changes %s.%s (%d, %d]: %w", schemaName, table, afterSeq, uptoSeq, err)
	}
	return nil
}

// KeyChanges returns every stored change of the row with key pk of one table
// of source, oldest first, including an update that moved the row to another
// key (its PKBefore is pk). It reads the events view: a scan of the table's
// chunks (by_table), unpacked by the server.
func (s *Store) KeyChanges(ctx context.Context, source, schemaName, table, pk string) ([]change.Event, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+eventCols+` FROM events
		WHERE source = ? AND schema_name = ? AND table_name = ? AND pk = ?
		UNION ALL SELECT `+eventCols+` FROM events
		WHERE source = ? AND schema_name = ? AND table_name = ? AND pk_before = ? AND pk <> ?
		ORDER BY seq`,
		source, schemaName, table, []byte(pk), source, schemaName, table, []byte(pk), []byte(pk))
	if err != nil {
		return nil, fmt.Errorf("key changes %s.%s %q: %w", schemaName, table, pk, err)
	}
	defer rows.Close()
	var out []change.Event
	for rows.Next() {
		var e change.Event
		if err := scanEvent(rows, &e); err != nil {
			return nil, fmt.Errorf("key changes %s.%s %q: %w", schemaName, table, pk, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("key changes %s.%s %q: %w", schemaName, table, pk, err)
	}
	return out, nil
}
