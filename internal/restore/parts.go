package restore

import (
	"context"
	"database/sql"
	"fmt"
)

// PartsTable holds the checkpoints of a table's parts: a large table
// loads as several key ranges at once, each on its own connection with
// its own checkpoint, in the schema of BookkeepingTable.
const PartsTable = "dbtrail_restore_parts"

// PartsDDL creates the parts table in schemaName. One row per (restore,
// target table, part): the part's key range (key_from inclusive, key_to
// exclusive, JSON as KeyOrder.Text; NULL for the table's first and last
// key), and its checkpoint: rows_loaded (rows of the range, in key order,
// that are committed) and last_key (the key of the last of them; for a
// table without a key, its one part's checkpoint is the row number
// alone). The table's row in BookkeepingTable counts every part's rows.
func PartsDDL(schemaName string) string {
	return `CREATE TABLE IF NOT EXISTS ` + Qualified(schemaName, PartsTable) + ` (
  restore_id   VARCHAR(64)     NOT NULL,
  schema_name  VARCHAR(64)     NOT NULL,
  table_name   VARCHAR(64)     NOT NULL,
  part         SMALLINT        NOT NULL,
  parts        SMALLINT        NOT NULL,
  key_from     LONGTEXT        NULL,
  key_to       LONGTEXT        NULL,
  rows_loaded  BIGINT          NOT NULL DEFAULT 0,
  last_key     LONGTEXT        NULL,
  chunks       BIGINT          NOT NULL DEFAULT 0,
  state        VARCHAR(16)     NOT NULL,
  updated_at   DATETIME(6)     NOT NULL,
  PRIMARY KEY (restore_id, schema_name, table_name, part)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`
}

// Part is one part's row of the parts table.
type Part struct {
	Part, Parts int
	// From and To bound the part's keys (KeyOrder.Text; "" for none).
	From, To   string
	RowsLoaded int64
	LastKey    string
	Chunks     int64
	State      string
}

// Done reports whether every row of the part is loaded.
func (p Part) Done() bool { return p.State != StateLoading }

// planParts decides the parts of a table whose load starts: up to want
// key ranges of the staged table (Staged.Split), fewer for a small table.
// A table whose checkpoint already moved without parts (a load begun by a
// version that loaded on one connection) goes on as one part from it.
func planParts(st Staged, cp Checkpoint, want int, partRows int64) []Part {
	if cp.RowsLoaded > 0 || cp.RowsTotal < 2*partRows {
		want = 1
	}
	want = min(want, int(cp.RowsTotal/partRows))
	ranges := st.Split(want)
	out := make([]Part, len(ranges))
	for i, r := range ranges {
		out[i] = Part{Part: i, Parts: len(ranges), From: r.From, To: r.To, State: StateLoading}
	}
	if len(out) == 1 {
		out[0].RowsLoaded, out[0].LastKey, out[0].Chunks = cp.RowsLoaded, cp.LastKey, cp.Chunks
	}
	return out
}

const partCols = `part, parts, COALESCE(key_from, ''), COALESCE(key_to, ''), rows_loaded, COALESCE(last_key, ''), chunks, state`

// readParts reads the parts of job's table, in part order (none when the
// load has not split it yet, or there is no parts table).
func readParts(ctx context.Context, q *sql.DB, schemaName string, job Job) ([]Part, error) {
	rows, err := q.QueryContext(ctx, "SELECT "+partCols+" FROM "+Qualified(schemaName, PartsTable)+
		" WHERE restore_id = ? AND schema_name = ? AND table_name = ? ORDER BY part", job.RestoreID, job.Schema, job.Name)
	if noTable(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the parts of %s: %w", job.Target(), err)
	}
	defer rows.Close()
	var out []Part
	for rows.Next() {
		var p Part
		if err := rows.Scan(&p.Part, &p.Parts, &p.From, &p.To, &p.RowsLoaded, &p.LastKey, &p.Chunks, &p.State); err != nil {
			return nil, fmt.Errorf("read the parts of %s: %w", job.Target(), err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the parts of %s: %w", job.Target(), err)
	}
	if len(out) > 0 && len(out) != out[0].Parts {
		return nil, fail(KindCheckpointConflict, fmt.Errorf("%s has %d part checkpoints of %d", job.Target(), len(out), out[0].Parts))
	}
	return out, nil
}

// insertParts writes a table's parts, all at once (INSERT IGNORE: a
// second loader that planned the same parts adds nothing; the caller
// reads them back).
func insertParts(ctx context.Context, db *sql.DB, schemaName string, job Job, parts []Part) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("write the parts of %s: %w", job.Target(), err)
	}
	defer tx.Rollback()
	for _, p := range parts {
		if _, err := tx.ExecContext(ctx, "INSERT IGNORE INTO "+Qualified(schemaName, PartsTable)+
			` (restore_id, schema_name, table_name, part, parts, key_from, key_to, rows_loaded, last_key, chunks, state, updated_at)
 VALUES (?, ?, ?, ?, ?, NULLIF(?, ''), NULLIF(?, ''), ?, NULLIF(?, ''), ?, ?, UTC_TIMESTAMP(6))`,
			job.RestoreID, job.Schema, job.Name, p.Part, p.Parts, p.From, p.To, p.RowsLoaded, p.LastKey, p.Chunks, p.State); err != nil {
			return fmt.Errorf("write the parts of %s: %w", job.Target(), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("write the parts of %s: %w", job.Target(), err)
	}
	return nil
}

// advancePart moves part p of job's table on by n rows (last key
// lastKey, state) inside tx, and only if the part still stands at
// p.RowsLoaded: another loader that moved it makes this a
// KindCheckpointConflict, and the caller rolls its chunk back. The
// table's row counts the rows too, so commit and both checkpoints agree.
func advancePart(ctx context.Context, tx querier, schemaName string, job Job, p Part, n int64, lastKey *string, state string) error {
	res, err := tx.ExecContext(ctx, "UPDATE "+Qualified(schemaName, PartsTable)+
		` SET rows_loaded = ?, last_key = ?, chunks = chunks + 1, state = ?, updated_at = UTC_TIMESTAMP(6)
 WHERE restore_id = ? AND schema_name = ? AND table_name = ? AND part = ? AND rows_loaded = ? AND state = ?`,
		p.RowsLoaded+n, lastKey, state, job.RestoreID, job.Schema, job.Name, p.Part, p.RowsLoaded, StateLoading)
	if err != nil {
		return fmt.Errorf("move the checkpoint of %s part %d: %w", job.Target(), p.Part+1, err)
	}
	if k, err := res.RowsAffected(); err != nil || k != 1 {
		return fail(KindCheckpointConflict, fmt.Errorf("checkpoint of %s part %d (restore %s) no longer stands at %d rows: another loader moved it",
			job.Target(), p.Part+1, job.RestoreID, p.RowsLoaded))
	}
	if _, err := tx.ExecContext(ctx, "UPDATE "+Qualified(schemaName, BookkeepingTable)+
		` SET rows_loaded = rows_loaded + ?, last_key = COALESCE(?, last_key), chunks = chunks + 1, updated_at = UTC_TIMESTAMP(6)
 WHERE restore_id = ? AND schema_name = ? AND table_name = ? AND state = ?`,
		n, lastKey, job.RestoreID, job.Schema, job.Name, StateLoading); err != nil {
		return fmt.Errorf("move the checkpoint of %s: %w", job.Target(), err)
	}
	return nil
}

// finishTable records job's table as loaded once every part is, and
// refuses a table whose parts together loaded another number of rows
// than the staged table holds.
func finishTable(ctx context.Context, db querier, schemaName string, job Job) (Checkpoint, error) {
	cp, ok, err := readCheckpoint(ctx, db, schemaName, job)
	if err != nil || !ok || cp.Done() {
		if err == nil && !ok {
			err = fmt.Errorf("the checkpoint of %s is gone", job.Target())
		}
		return cp, err
	}
	if cp.RowsLoaded != cp.RowsTotal {
		return cp, fail(KindCheckpointConflict, fmt.Errorf("staged %s: its parts loaded %d rows; the checkpoint expects %d",
			job.Table.Key(), cp.RowsLoaded, cp.RowsTotal))
	}
	if _, err := db.ExecContext(ctx, "UPDATE "+Qualified(schemaName, BookkeepingTable)+
		" SET state = ?, updated_at = UTC_TIMESTAMP(6) WHERE restore_id = ? AND schema_name = ? AND table_name = ? AND state = ?",
		StateLoaded, job.RestoreID, job.Schema, job.Name, StateLoading); err != nil {
		return cp, fmt.Errorf("record %s as loaded: %w", job.Target(), err)
	}
	cp.State = StateLoaded
	return cp, nil
}
