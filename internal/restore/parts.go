package restore

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
