package restore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/target"
)

// BookkeepingTable is the table that holds every restore's checkpoints, in
// the schema named by --checkpoint-schema (default DefaultCheckpointSchema).
const BookkeepingTable = "dbtrail_restore"

// DefaultCheckpointSchema holds BookkeepingTable unless a flag says otherwise.
const DefaultCheckpointSchema = "dbtrail"

// States of a table in the bookkeeping table.
const (
	StateLoading  = "loading"  // chunks are being loaded; rows_loaded is the checkpoint
	StateLoaded   = "loaded"   // every row is in load_table
	StateVerified = "verified" // fingerprinted, equal to the rebuilt table, and (replace) swapped in
)

// BookkeepingDDL creates the bookkeeping table in schemaName. One row per
// (restore, target table): the source table and the cut it was rebuilt
// at, the staged table's fingerprint and rows, where the rows go
// (load_table: the target table, or its --replace twin), and the
// checkpoint: rows_loaded (rows of the staged table, in its order, that
// are committed) and last_key (the key of the last of them, JSON; NULL for
// a table without a key, whose checkpoint is the row number alone).
func BookkeepingDDL(schemaName string) string {
	return `CREATE TABLE IF NOT EXISTS ` + QuoteIdent(schemaName) + `.` + QuoteIdent(BookkeepingTable) + ` (
  restore_id   VARCHAR(64)     NOT NULL,
  schema_name  VARCHAR(64)     NOT NULL,
  table_name   VARCHAR(64)     NOT NULL,
  load_table   VARCHAR(64)     NOT NULL,
  source       VARCHAR(64)     NOT NULL,
  source_table VARCHAR(130)    NOT NULL,
  cut_seq      BIGINT UNSIGNED NOT NULL,
  fingerprint  VARCHAR(40)     NOT NULL,
  rows_total   BIGINT          NOT NULL,
  rows_loaded  BIGINT          NOT NULL DEFAULT 0,
  last_key     LONGTEXT        NULL,
  chunks       BIGINT          NOT NULL DEFAULT 0,
  state        VARCHAR(16)     NOT NULL,
  started_at   DATETIME(6)     NOT NULL,
  updated_at   DATETIME(6)     NOT NULL,
  PRIMARY KEY (restore_id, schema_name, table_name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`
}

// Checkpoint is one table's row of the bookkeeping table.
type Checkpoint struct {
	RestoreID   string
	Schema      string // the target table's schema
	Table       string // the target table's name
	LoadTable   string // where the rows go: Table, or LoadTable(Table) under --replace
	Source      string
	SourceTable string // schema.table at the source
	CutSeq      uint64
	Fingerprint string // the staged table's (snapshot.Fingerprint text)
	RowsTotal   int64
	RowsLoaded  int64
	LastKey     string // JSON array of the last loaded row's key values; "" for none
	Chunks      int64
	State       string
}

// Done reports whether every row is loaded.
func (c Checkpoint) Done() bool { return c.State != StateLoading }

// QuoteIdent quotes a MySQL identifier with backticks.
func QuoteIdent(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// Qualified is `schema`.`table`.
func Qualified(schemaName, table string) string {
	return QuoteIdent(schemaName) + "." + QuoteIdent(table)
}

// Matches refuses a checkpoint that was written for other staged rows than
// those about to be loaded (another cut, another rebuild): resuming it
// would mix two tables.
func (c Checkpoint) Matches(cutSeq uint64, fingerprint string, rows int64) error {
	if c.CutSeq != cutSeq || c.Fingerprint != fingerprint || c.RowsTotal != rows {
		return fmt.Errorf("checkpoint of %s.%s (restore %s) is of cut seq %d, %d rows, fingerprint %s; the staged table is of cut seq %d, %d rows, fingerprint %s",
			c.Schema, c.Table, c.RestoreID, c.CutSeq, c.RowsTotal, c.Fingerprint, cutSeq, rows, fingerprint)
	}
	return nil
}

const checkpointCols = `restore_id, schema_name, table_name, load_table, source, source_table, cut_seq, fingerprint,
 rows_total, rows_loaded, COALESCE(last_key, ''), chunks, state`

// scanCheckpoint reads one row of checkpointCols.
func scanCheckpoint(scan func(...any) error) (c Checkpoint, err error) {
	err = scan(&c.RestoreID, &c.Schema, &c.Table, &c.LoadTable, &c.Source, &c.SourceTable, &c.CutSeq, &c.Fingerprint,
		&c.RowsTotal, &c.RowsLoaded, &c.LastKey, &c.Chunks, &c.State)
	return c, err
}

// isNoSuchTable reports whether err is MySQL's "no such table".
func isNoSuchTable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1146
}

// noTable reports whether err is MySQL's "no such table" or "no such
// schema": the bookkeeping is not there yet.
func noTable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1146 || me.Number == 1049)
}

// readCheckpoint reads the checkpoint of job's table from the
// bookkeeping table in schemaName; ok is false when there is none (or no
// bookkeeping table yet).
func readCheckpoint(ctx context.Context, q querier, schemaName string, job Job) (c Checkpoint, ok bool, err error) {
	c, err = scanCheckpoint(q.QueryRowContext(ctx, "SELECT "+checkpointCols+" FROM "+Qualified(schemaName, BookkeepingTable)+
		" WHERE restore_id = ? AND schema_name = ? AND table_name = ?", job.RestoreID, job.Schema, job.Name).Scan)
	switch {
	case errors.Is(err, sql.ErrNoRows), noTable(err):
		return c, false, nil
	case err != nil:
		return c, false, fmt.Errorf("read the checkpoint of %s: %w", job.Target(), err)
	}
	return c, true, nil
}

// insertCheckpoint writes c as a new checkpoint (state loading, nothing
// loaded).
func insertCheckpoint(ctx context.Context, q querier, schemaName string, c Checkpoint) error {
	_, err := q.ExecContext(ctx, "INSERT INTO "+Qualified(schemaName, BookkeepingTable)+
		` (restore_id, schema_name, table_name, load_table, source, source_table, cut_seq, fingerprint, rows_total,
 rows_loaded, last_key, chunks, state, started_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, NULL, 0, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
		c.RestoreID, c.Schema, c.Table, c.LoadTable, c.Source, c.SourceTable, c.CutSeq, c.Fingerprint, c.RowsTotal, StateLoading)
	if err != nil {
		return fmt.Errorf("write the checkpoint of %s.%s: %w", c.Schema, c.Table, err)
	}
	return nil
}

// setState sets the state of job's checkpoint.
func setState(ctx context.Context, q querier, schemaName string, job Job, state string) error {
	_, err := q.ExecContext(ctx, "UPDATE "+Qualified(schemaName, BookkeepingTable)+
		" SET state = ?, updated_at = UTC_TIMESTAMP(6) WHERE restore_id = ? AND schema_name = ? AND table_name = ?",
		state, job.RestoreID, job.Schema, job.Name)
	if err != nil {
		return fmt.Errorf("record %s as %s: %w", job.Target(), state, err)
	}
	return nil
}

// Checkpoints reads every checkpoint of restore id from the bookkeeping
// table in schemaName ("": the default) on server s (opened here, as
// "target"), by target table: what a restore that stopped (cancelled,
// failed) loaded, and where a rerun goes on from.
func Checkpoints(ctx context.Context, s target.Server, schemaName, id string) ([]Checkpoint, error) {
	db, addr, err := target.Open(ctx, s, "target")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT "+checkpointCols+" FROM "+Qualified(CheckpointSchemaOr(schemaName), BookkeepingTable)+
		" WHERE restore_id = ? ORDER BY schema_name, table_name", id)
	if err != nil {
		return nil, fmt.Errorf("checkpoints of restore %s on %s: %w", id, addr, err)
	}
	defer rows.Close()
	var out []Checkpoint
	for rows.Next() {
		c, err := scanCheckpoint(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("checkpoints of restore %s on %s: %w", id, addr, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
