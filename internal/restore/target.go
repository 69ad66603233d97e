package restore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/dbtrail/dbtrail/internal/target"
)

// Target is the server a restore writes into, opened: its connection
// pool and address, and the replicas and throttle query that pause the
// load.
type Target struct {
	DB            *sql.DB
	Addr          string
	Replicas      []target.Server
	ThrottleQuery string
}

// OpenServer opens s, what naming it in messages: a server that does not
// answer is KindTargetUnreachable, anything else the configuration's
// (KindTargetRefused). The caller closes the pool.
func OpenServer(ctx context.Context, s target.Server, what string) (*sql.DB, string, error) {
	db, addr, err := target.Open(ctx, s, what)
	var gone *target.ErrUnreachable
	switch {
	case errors.As(err, &gone):
		return nil, addr, fail(KindTargetUnreachable, err)
	case err != nil:
		return nil, addr, fail(KindTargetRefused, err)
	}
	return db, addr, nil
}

// CheckReplicas connects to every replica of t once (and closes it): a
// replica that cannot be reached refuses the restore before it starts.
func (t *Target) CheckReplicas(ctx context.Context) error {
	for i, r := range t.Replicas {
		db, _, err := OpenServer(ctx, r, fmt.Sprintf("replica %d", i+1))
		if err != nil {
			return err
		}
		db.Close()
	}
	return nil
}

// session is one connection of the target set up for loading, as a .sql
// export's header sets its session (sqlexport.Header: UTF-8, UTC
// TIMESTAMPs, a sql_mode that loads zero dates and zero AUTO_INCREMENT
// values, no foreign key checks), and sql_log_bin=0 for noBinlog. Unique
// checks stay on: a duplicate key fails the chunk. release discards the
// connection (it never goes back to the pool with those settings).
func session(ctx context.Context, db *sql.DB, noBinlog bool) (*sql.Conn, func(), error) {
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
				return nil, nil, fail(KindMissingPrivilege, fmt.Errorf("--no-binlog: %s: %w (it needs SUPER or BINLOG ADMIN)", s, err))
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

// tableRows reports whether schema.table exists and whether it holds a row.
func tableRows(ctx context.Context, q querier, schemaName, table string) (exists, rows bool, err error) {
	var n int
	err = q.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", schemaName, table).Scan(&n)
	if err != nil || n == 0 {
		return false, false, err
	}
	var one int
	err = q.QueryRowContext(ctx, "SELECT 1 FROM "+Qualified(schemaName, table)+" LIMIT 1").Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return true, false, nil
	}
	return true, err == nil, err
}
