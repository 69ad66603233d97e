package index

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
)

// migration is one numbered change of the index schema: statements, or a
// function for a change that must look at the index first. Both are DDL (each
// statement commits on its own), so each must be safe to run again after a
// crash half way through: CREATE ... IF NOT EXISTS and the like.
type migration struct {
	version int
	name    string
	stmts   func(now time.Time) []string
	run     func(ctx context.Context, conn *sql.Conn, now time.Time) error
}

// migrations are applied in order, each once. Never edit or renumber a
// released one: append a new one.
var migrations = []migration{
	{1, "create events, checkpoints, schema_history, capture_gaps", func(now time.Time) []string {
		return []string{eventsDDL(change.HourID(now)), checkpointsDDL, schemaHistoryDDL, captureGapsDDL}
	}, nil},
	{2, "create capture_starts", func(time.Time) []string { return []string{captureStartsDDL} }, nil},
	// A key-changing update keeps its old key, so the old key's history ends
	// with it. No index: KeyChanges finds it within the table's range.
	{3, "events.pk_before", func(time.Time) []string {
		return []string{"ALTER TABLE events ADD COLUMN IF NOT EXISTS pk_before VARBINARY(3072) NULL AFTER pk"}
	}, nil},
	// One InnoDB row per run of events instead of one per event: capture's
	// insert cost was the index's three B-trees per event. `events` becomes
	// a view with the same columns.
	{4, "pack events into event_chunks; events becomes a view", nil, packEvents},
	// The archive's bookkeeping: which hours are on object storage, and a
	// reindex in progress.
	{5, "create archives, restores", func(time.Time) []string { return []string{archivesDDL, restoresDDL} }, nil},
	// Images stored as value arrays, the names once per chunk: chunks
	// written before keep NULL and object images; the view reads both.
	{6, "event_chunks.column_names; the events view rebuilds object images", func(time.Time) []string {
		return []string{"ALTER TABLE event_chunks ADD COLUMN IF NOT EXISTS column_names MEDIUMBLOB NULL AFTER n", eventsViewDDL}
	}, nil},
	// The verdicts of restore drills (docs/restore.md), for status.
	{7, "create restore_drills", func(time.Time) []string { return []string{restoreDrillsDDL} }, nil},
	// The free space of every worker's folders, for status (docs/index-schema.md).
	{8, "create folder_space", func(time.Time) []string { return []string{folderSpaceDDL} }, nil},
	// The partial re-dumps of a source (docs/workflows.md), for status.
	{9, "create redumps", func(time.Time) []string { return []string{redumpsDDL} }, nil},
	// Capture's state sampled over time, for the console's plots (docs/index-schema.md).
	{10, "create capture_samples", func(time.Time) []string { return []string{captureSamplesDDL} }, nil},
}

// captureStartsDDL records each point where capture of a source began with no
// history before it: the first start, and each restart past a gap. A
// position before a source's first start is not covered by the index.
const captureStartsDDL = `CREATE TABLE IF NOT EXISTS capture_starts (
  source VARCHAR(64) NOT NULL,
  seq BIGINT UNSIGNED NOT NULL,
  binlog_file VARCHAR(255) NOT NULL,
  binlog_pos BIGINT UNSIGNED NOT NULL,
  reason VARCHAR(255) NOT NULL,
  started_at DATETIME(6) NOT NULL,
  PRIMARY KEY (source, seq, binlog_file, binlog_pos)
)` + tableOptions

// archivesDDL records, per source and hour, the archive file of the hour's
// events on object storage: written before the upload (confirmed_at NULL)
// and confirmed once the stored object's size, sha256 and footer count were
// read back. dropped_at is when the hour's events last left the index.
const archivesDDL = `CREATE TABLE IF NOT EXISTS archives (
  source VARCHAR(64) NOT NULL,
  hour DATETIME NOT NULL,
  object VARCHAR(1024) NOT NULL,
  location VARCHAR(1024) NOT NULL,
  size BIGINT UNSIGNED NOT NULL,
  sha256 CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  events BIGINT UNSIGNED NOT NULL,
  first_seq BIGINT UNSIGNED NOT NULL,
  last_seq BIGINT UNSIGNED NOT NULL,
  confirmed_at DATETIME(6) NULL,
  dropped_at DATETIME(6) NULL,
  PRIMARY KEY (source, hour)
)` + tableOptions

// restoresDDL records a reindex of a source: started, and finished
// with what it restored. An unfinished row lets a new run go on.
// (The table keeps its name from before issue 35 called this "reindex".)
const restoresDDL = `CREATE TABLE IF NOT EXISTS restores (
  source VARCHAR(64) NOT NULL PRIMARY KEY,
  location VARCHAR(1024) NOT NULL,
  started_at DATETIME(6) NOT NULL,
  finished_at DATETIME(6) NULL,
  hours INT UNSIGNED NOT NULL DEFAULT 0,
  events BIGINT UNSIGNED NOT NULL DEFAULT 0,
  first_seq BIGINT UNSIGNED NOT NULL DEFAULT 0,
  last_seq BIGINT UNSIGNED NOT NULL DEFAULT 0,
  failed LONGTEXT NULL,
  outcome TEXT NULL
)` + tableOptions

const tableOptions = " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin ROW_FORMAT=DYNAMIC"

// eventsDDL creates the events table with p_before holding every hour before
// firstHour and p_future the rest; EnsurePartitions adds the hours between.
func eventsDDL(firstHour uint32) string {
	return `CREATE TABLE IF NOT EXISTS events (
  source VARCHAR(64) NOT NULL,
  seq BIGINT UNSIGNED NOT NULL,
  commit_ts DATETIME(6) NOT NULL,
  hour_id INT UNSIGNED NOT NULL,
  binlog_file VARCHAR(255) NOT NULL,
  end_pos BIGINT UNSIGNED NOT NULL,
  gtid VARCHAR(100) NULL,
  schema_name VARCHAR(64) NOT NULL,
  table_name VARCHAR(64) NOT NULL,
  op CHAR(1) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  pk VARBINARY(3072) NOT NULL,
  schema_version INT UNSIGNED NOT NULL,
  before_image LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  after_image LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  PRIMARY KEY (source, seq, hour_id),
  KEY by_table (source, schema_name, table_name, seq),
  KEY by_key (source, schema_name, table_name, pk(255), seq)
)` + tableOptions + fmt.Sprintf(`
PARTITION BY RANGE (hour_id) (
  PARTITION %s VALUES LESS THAN (%d),
  PARTITION %s VALUES LESS THAN MAXVALUE
)`, PartitionBefore, firstHour, PartitionFuture)
}

const checkpointsDDL = `CREATE TABLE IF NOT EXISTS checkpoints (
  source VARCHAR(64) NOT NULL PRIMARY KEY,
  binlog_file VARCHAR(255) NOT NULL,
  binlog_pos BIGINT UNSIGNED NOT NULL,
  gtid VARCHAR(100) NULL,
  gtid_set TEXT NULL,
  last_seq BIGINT UNSIGNED NOT NULL,
  last_commit_ts DATETIME(6) NULL,
  updated_at DATETIME(6) NOT NULL
)` + tableOptions

const schemaHistoryDDL = `CREATE TABLE IF NOT EXISTS schema_history (
  source VARCHAR(64) NOT NULL,
  schema_name VARCHAR(64) NOT NULL,
  table_name VARCHAR(64) NOT NULL,
  version INT UNSIGNED NOT NULL,
  seq BIGINT UNSIGNED NOT NULL,
  binlog_file VARCHAR(255) NOT NULL,
  binlog_pos BIGINT UNSIGNED NOT NULL,
  ddl LONGTEXT NOT NULL,
  definition LONGTEXT NULL,
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (source, schema_name, table_name, version),
  KEY by_seq (source, seq)
)` + tableOptions

const captureGapsDDL = `CREATE TABLE IF NOT EXISTS capture_gaps (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  source VARCHAR(64) NOT NULL,
  from_file VARCHAR(255) NOT NULL,
  from_pos BIGINT UNSIGNED NOT NULL,
  from_gtid TEXT NULL,
  to_file VARCHAR(255) NOT NULL,
  to_pos BIGINT UNSIGNED NOT NULL,
  reason TEXT NOT NULL,
  detected_at DATETIME(6) NOT NULL,
  KEY by_source (source)
)` + tableOptions

const migrationsDDL = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INT NOT NULL PRIMARY KEY,
  name VARCHAR(255) NOT NULL,
  applied_at DATETIME(6) NOT NULL
)` + tableOptions

// SchemaVersionLatest is the index schema version this code creates and
// understands.
func SchemaVersionLatest() int { return migrations[len(migrations)-1].version }

// Init creates or upgrades the index schema, then makes sure the next
// DefaultAhead hours have partitions. Each migration is applied once, in
// order, and recorded in schema_migrations; running Init again is a no-op
// apart from partition upkeep. Processes that race serialize on
// GET_LOCK('dbtrail.migrate'), so a second Init waits for the first and then
// finds nothing to do. An index already migrated past what this code knows is
// an error (an older dbtrail must not write a newer index).
func (s *Store) Init(ctx context.Context) error {
	if err := s.migrate(ctx); err != nil {
		return err
	}
	return s.EnsurePartitions(ctx, time.Now(), DefaultAhead)
}

func (s *Store) migrate(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate index: %w", err)
	}
	defer conn.Close()
	unlock, err := namedLock(ctx, conn, "dbtrail.migrate")
	if err != nil {
		return fmt.Errorf("migrate index: %w", err)
	}
	defer unlock()
	if _, err := conn.ExecContext(ctx, migrationsDDL); err != nil {
		return fmt.Errorf("migrate index: create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := conn.QueryContext(ctx, "SELECT version FROM schema_migrations")
	if err != nil {
		return fmt.Errorf("migrate index: read schema_migrations: %w", err)
	}
	maxApplied := 0
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return fmt.Errorf("migrate index: read schema_migrations: %w", err)
		}
		applied[v] = true
		maxApplied = max(maxApplied, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("migrate index: read schema_migrations: %w", err)
	}
	if latest := SchemaVersionLatest(); maxApplied > latest {
		return fmt.Errorf("migrate index: index schema version %d is newer than this dbtrail understands (%d)", maxApplied, latest)
	}
	for _, m := range migrations {
		if applied[m.version] {
			continue
		}
		var stmts []string
		if m.stmts != nil {
			stmts = m.stmts(time.Now())
		}
		for _, stmt := range stmts {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migrate index: migration %d (%s): %w", m.version, m.name, err)
			}
		}
		if m.run != nil {
			if err := m.run(ctx, conn, time.Now()); err != nil {
				return fmt.Errorf("migrate index: migration %d (%s): %w", m.version, m.name, err)
			}
		}
		if _, err := conn.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
			m.version, m.name, time.Now().UTC()); err != nil {
			return fmt.Errorf("migrate index: record migration %d: %w", m.version, err)
		}
	}
	return nil
}
