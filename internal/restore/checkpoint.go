package restore

import (
	"fmt"
	"strings"
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
