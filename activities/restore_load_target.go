package activities

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/internal/target"
)

// loadSession is one connection of the target set up for loading, as a
// .sql export's header sets its session (sqlexport.Header: UTF-8, UTC
// TIMESTAMPs, a sql_mode that loads zero dates and zero AUTO_INCREMENT
// values, no foreign key checks), and sql_log_bin=0 for noBinlog. Unique
// checks stay on: a duplicate key fails the chunk. release discards the
// connection (it never goes back to the pool with those settings).
func loadSession(ctx context.Context, db *sql.DB, noBinlog bool) (*sql.Conn, func(), error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to the target: %w", err)
	}
	release := func() {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		conn.Close()
	}
	stmts := []string{"SET NAMES utf8mb4", "SET time_zone = '+00:00'",
		"SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION'", "SET SESSION foreign_key_checks = 0",
		"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"}
	if noBinlog {
		stmts = append(stmts, "SET SESSION sql_log_bin = 0")
	}
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			release()
			if s == "SET SESSION sql_log_bin = 0" {
				return nil, nil, nonRetryable(ErrMissingPrivilege, fmt.Errorf("--no-binlog: %s: %w (it needs SUPER or BINLOG ADMIN)", s, err))
			}
			return nil, nil, fmt.Errorf("target session: %s: %w", s, err)
		}
	}
	return conn, release, nil
}

// querier is a *sql.DB, *sql.Conn or *sql.Tx.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

const checkpointCols = `restore_id, schema_name, table_name, load_table, source, source_table, cut_seq, fingerprint,
 rows_total, rows_loaded, COALESCE(last_key, ''), chunks, state`

// readCheckpoint reads the checkpoint of job's table; ok is false when
// there is none (or no bookkeeping table yet).
func readCheckpoint(ctx context.Context, q querier, schemaName string, job RestoreTableJob) (c restore.Checkpoint, ok bool, err error) {
	err = q.QueryRowContext(ctx, "SELECT "+checkpointCols+" FROM "+restore.Qualified(schemaName, restore.BookkeepingTable)+
		" WHERE restore_id = ? AND schema_name = ? AND table_name = ?", job.RestoreID, job.Schema, job.Name).Scan(
		&c.RestoreID, &c.Schema, &c.Table, &c.LoadTable, &c.Source, &c.SourceTable, &c.CutSeq, &c.Fingerprint,
		&c.RowsTotal, &c.RowsLoaded, &c.LastKey, &c.Chunks, &c.State)
	var me *mysql.MySQLError
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return c, false, nil
	case errors.As(err, &me) && (me.Number == 1146 || me.Number == 1049): // no table, no schema
		return c, false, nil
	case err != nil:
		return c, false, fmt.Errorf("read the checkpoint of %s: %w", job.Target(), err)
	}
	return c, true, nil
}

// insertCheckpoint writes c as a new checkpoint (state loading, nothing
// loaded).
func insertCheckpoint(ctx context.Context, q querier, schemaName string, c restore.Checkpoint) error {
	_, err := q.ExecContext(ctx, "INSERT INTO "+restore.Qualified(schemaName, restore.BookkeepingTable)+
		` (restore_id, schema_name, table_name, load_table, source, source_table, cut_seq, fingerprint, rows_total,
 rows_loaded, last_key, chunks, state, started_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, NULL, 0, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`,
		c.RestoreID, c.Schema, c.Table, c.LoadTable, c.Source, c.SourceTable, c.CutSeq, c.Fingerprint, c.RowsTotal, restore.StateLoading)
	if err != nil {
		return fmt.Errorf("write the checkpoint of %s.%s: %w", c.Schema, c.Table, err)
	}
	return nil
}

// advanceCheckpoint moves c's checkpoint from c.RowsLoaded to rows (last
// key lastKey, state) inside tx, and only if it still stands at
// c.RowsLoaded: another loader that moved it makes this a
// CheckpointConflict, and the caller rolls its chunk back.
func advanceCheckpoint(ctx context.Context, tx querier, schemaName string, c restore.Checkpoint, rows int64, lastKey *string, state string) error {
	res, err := tx.ExecContext(ctx, "UPDATE "+restore.Qualified(schemaName, restore.BookkeepingTable)+
		` SET rows_loaded = ?, last_key = ?, chunks = chunks + 1, state = ?, updated_at = UTC_TIMESTAMP(6)
 WHERE restore_id = ? AND schema_name = ? AND table_name = ? AND rows_loaded = ? AND state = ?`,
		rows, lastKey, state, c.RestoreID, c.Schema, c.Table, c.RowsLoaded, restore.StateLoading)
	if err != nil {
		return fmt.Errorf("move the checkpoint of %s.%s: %w", c.Schema, c.Table, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return nonRetryable(ErrCheckpointConflict, fmt.Errorf("checkpoint of %s.%s (restore %s) no longer stands at %d rows: another loader moved it",
			c.Schema, c.Table, c.RestoreID, c.RowsLoaded))
	}
	return nil
}

// setState sets the state of job's checkpoint.
func setState(ctx context.Context, q querier, schemaName string, job RestoreTableJob, state string) error {
	_, err := q.ExecContext(ctx, "UPDATE "+restore.Qualified(schemaName, restore.BookkeepingTable)+
		" SET state = ?, updated_at = UTC_TIMESTAMP(6) WHERE restore_id = ? AND schema_name = ? AND table_name = ?",
		state, job.RestoreID, job.Schema, job.Name)
	if err != nil {
		return fmt.Errorf("record %s as %s: %w", job.Target(), state, err)
	}
	return nil
}

// tableRows reports whether schema.table exists and whether it holds a row.
func tableRows(ctx context.Context, q querier, schemaName, table string) (exists, rows bool, err error) {
	var n int
	err = q.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", schemaName, table).Scan(&n)
	if err != nil || n == 0 {
		return false, false, err
	}
	var one int
	err = q.QueryRowContext(ctx, "SELECT 1 FROM "+restore.Qualified(schemaName, table)+" LIMIT 1").Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return true, false, nil
	}
	return true, err == nil, err
}

// signals reads the throttle's inputs: every replica's replication state,
// the target's Threads_running and the throttle query's value.
func signals(ctx context.Context, target *sql.DB, replicas []*sql.DB, names []string, throttleQuery string) (restore.Signals, error) {
	var s restore.Signals
	for i, r := range replicas {
		s.Replicas = append(s.Replicas, replicaState(ctx, r, names[i]))
	}
	var name, v string
	if err := target.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Threads_running'").Scan(&name, &v); err != nil {
		return s, fmt.Errorf("target Threads_running: %w", err)
	}
	s.ThreadsRunning, _ = strconv.Atoi(v)
	if throttleQuery != "" {
		var val sql.NullString
		if err := target.QueryRowContext(ctx, throttleQuery).Scan(&val); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return s, nonRetryable(ErrBadInput, fmt.Errorf("--throttle-query %q: %w", throttleQuery, err))
		}
		s.HasThrottle = true
		if val.Valid {
			f, err := strconv.ParseFloat(strings.TrimSpace(val.String), 64)
			if err != nil {
				return s, nonRetryable(ErrBadInput, fmt.Errorf("--throttle-query %q returned %q, not a number", throttleQuery, val.String))
			}
			s.Throttle = f
		}
	}
	return s, nil
}

// replicaState reads SHOW SLAVE STATUS of one replica.
func replicaState(ctx context.Context, db *sql.DB, name string) restore.ReplicaState {
	st := restore.ReplicaState{Name: name}
	rows, err := db.QueryContext(ctx, "SHOW SLAVE STATUS")
	if err != nil {
		st.Err = err.Error()
		return st
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		st.Err = err.Error()
		return st
	}
	if !rows.Next() {
		st.Err = "it is not a replica (SHOW SLAVE STATUS is empty)"
		return st
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		st.Err = err.Error()
		return st
	}
	get := func(c string) sql.NullString {
		for i, n := range cols {
			if strings.EqualFold(n, c) {
				return vals[i]
			}
		}
		return sql.NullString{}
	}
	io, sqlRunning, lag := get("Slave_IO_Running"), get("Slave_SQL_Running"), get("Seconds_Behind_Master")
	st.Running = io.String == "Yes" && sqlRunning.String == "Yes" && lag.Valid
	if lag.Valid {
		n, _ := strconv.Atoi(lag.String)
		st.Lag = time.Duration(n) * time.Second
	}
	return st
}

// RestoreCheckpoints reads every checkpoint of restore id from the
// bookkeeping table of an ad-hoc target ep (the CLI's --target-dsn, read
// on the CLI's machine with its own password file), by target table: what
// a restore that stopped (cancelled, failed) loaded, and where a rerun
// goes on from.
func RestoreCheckpoints(ctx context.Context, ep Endpoint, sp RestoreSpec, id string) ([]restore.Checkpoint, error) {
	db, addr, err := target.Open(ctx, target.Server(ep), "target")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT "+checkpointCols+" FROM "+restore.Qualified(sp.checkpointSchema(), restore.BookkeepingTable)+
		" WHERE restore_id = ? ORDER BY schema_name, table_name", id)
	if err != nil {
		return nil, fmt.Errorf("checkpoints of restore %s on %s: %w", id, addr, err)
	}
	defer rows.Close()
	var out []restore.Checkpoint
	for rows.Next() {
		var c restore.Checkpoint
		if err := rows.Scan(&c.RestoreID, &c.Schema, &c.Table, &c.LoadTable, &c.Source, &c.SourceTable, &c.CutSeq, &c.Fingerprint,
			&c.RowsTotal, &c.RowsLoaded, &c.LastKey, &c.Chunks, &c.State); err != nil {
			return nil, fmt.Errorf("checkpoints of restore %s on %s: %w", id, addr, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
