// Package index is dbtrail's index store: the MariaDB/MySQL database that keeps
// every captured row change (with its before and after image), the capture
// checkpoint, the schema history, capture gaps and the capture lease.
//
// The store is the one place that knows the index's tables. Capture writes
// through a Tx (events, schema versions and the checkpoint of one batch commit
// together or not at all); workflows read through the Store's methods.
//
// Every connection the Store opens runs in UTC (session time_zone '+00:00',
// DATETIME read back as UTC time.Time) and with an explicit sql_mode that keeps
// backslash escapes, whatever the DSN says, so literals the Store builds itself
// mean what they say.
package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	dsnrule "github.com/dbtrail/dbtrail/internal/dsn"
)

// ErrLeaseLost means the capture lease of a source is no longer held by this
// process: another capturer may be running, so nothing more may be written.
var ErrLeaseLost = errors.New("index: capture lease lost")

// ErrLeaseHeld means TryLease gave up: another connection holds the lease.
var ErrLeaseHeld = errors.New("index: capture lease held by another connection")

// ErrDuplicateSeq means an event's seq is already in the index (or not after
// the source's checkpoint): a bug in whoever assigns seqs, never retried.
var ErrDuplicateSeq = errors.New("index: duplicate event seq")

// sessionSQLMode is the sql_mode of every index connection. It must not contain
// NO_BACKSLASH_ESCAPES nor ANSI_QUOTES: statements are written for the
// default quoting.
const sessionSQLMode = "STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

// Store is the index database. It is safe for concurrent use.
type Store struct {
	db *sql.DB
	// wdb serves capture's transactions (Begin). Its sessions send text as
	// character set binary: the chunk payloads, UTF-8 checked by
	// PackEvents, are then stored without the server scanning them for
	// their characters (a fifth of its CPU per event, measured). Values for
	// text columns are still converted and checked by the server.
	wdb *sql.DB
	// maxStmt is the most bytes of rows InsertEvents puts in one statement:
	// targetStmtBytes, less if the server's max_allowed_packet is smaller.
	maxStmt int
	// maxPacket is the server's max_allowed_packet.
	maxPacket int

	// database is the index database's name (the DSN's).
	database string

	mu    sync.Mutex
	stmts map[int]*sql.Stmt // prepared INSERTs by row count
}

// Pool limits of the Store's *sql.DB.
const (
	maxOpenConns    = 16
	maxIdleConns    = 8
	connMaxLifetime = 30 * time.Minute
	connMaxIdleTime = 5 * time.Minute
	// targetStmtBytes keeps an INSERT's packet within the driver's cached
	// buffer (go-sql-driver reuses up to 256 KiB; a larger packet is
	// allocated and grown anew each time, which cost more than the round
	// trips saved).
	targetStmtBytes = 255 << 10
)

// Open connects to the index database named by dsn (go-sql-driver/mysql
// form), forcing UTC, the Store's sql_mode, utf8mb4 and parseTime whatever the
// DSN says, and pings it. It does not create tables: call Init.
// Errors never contain the DSN's password.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := storeConfig(dsn)
	if err != nil {
		return nil, err
	}
	db, err := openPool(cfg, maxOpenConns)
	if err != nil {
		return nil, fmt.Errorf("index dsn %s: %w", RedactDSN(dsn), err)
	}
	wcfg := cfg.Clone()
	if err := wcfg.Apply(mysql.Charset("binary", "binary")); err != nil {
		db.Close()
		return nil, fmt.Errorf("index dsn %s: %w", RedactDSN(dsn), err)
	}
	wdb, err := openPool(wcfg, 4)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("index dsn %s: %w", RedactDSN(dsn), err)
	}
	s := &Store{db: db, wdb: wdb, maxStmt: targetStmtBytes, stmts: map[int]*sql.Stmt{}, database: cfg.DBName}
	if err := errors.Join(db.PingContext(ctx), wdb.PingContext(ctx)); err != nil {
		s.Close()
		return nil, fmt.Errorf("connect to index %s: %w", RedactDSN(dsn), err)
	}
	var maxPacket int64
	if err := db.QueryRowContext(ctx, "SELECT @@max_allowed_packet").Scan(&maxPacket); err != nil {
		s.Close()
		return nil, fmt.Errorf("read index max_allowed_packet: %w", err)
	}
	s.maxPacket = int(maxPacket)
	if lim := int(maxPacket) - 1024; lim < s.maxStmt {
		s.maxStmt = lim
	}
	return s, nil
}

// openPool opens a pool of at most maxOpen connections with cfg.
func openPool(cfg *mysql.Config, maxOpen int) (*sql.DB, error) {
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(maxOpen)
	db.SetMaxIdleConns(min(maxIdleConns, maxOpen))
	db.SetConnMaxLifetime(connMaxLifetime)
	db.SetConnMaxIdleTime(connMaxIdleTime)
	return db, nil
}

// storeConfig parses dsn and imposes the session settings the Store relies on.
func storeConfig(dsn string) (*mysql.Config, error) {
	cfg, err := dsnrule.Parse("index dsn "+RedactDSN(dsn), dsn)
	if err != nil {
		return nil, err
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	for k := range cfg.Params {
		switch strings.ToLower(k) {
		case "time_zone", "sql_mode", "net_write_timeout":
			delete(cfg.Params, k)
		}
	}
	cfg.Params["time_zone"] = "'+00:00'"
	cfg.Params["sql_mode"] = "'" + sessionSQLMode + "'"
	// TableChanges hands rows to a callback that may be slow; do not let the
	// server drop the connection while it waits.
	cfg.Params["net_write_timeout"] = "3600"
	cfg.Loc = time.UTC
	cfg.ParseTime = true
	cfg.InterpolateParams = true
	cfg.MaxAllowedPacket = 0 // take the server's
	if err := cfg.Apply(mysql.Charset("utf8mb4", "utf8mb4_general_ci")); err != nil {
		return nil, fmt.Errorf("index dsn %s: %w", RedactDSN(dsn), err)
	}
	return cfg, nil
}

// RedactDSN returns dsn with its password replaced by "xxxxx", for messages and
// logs. A DSN that does not parse has everything between the user name and the
// last '@' replaced.
func RedactDSN(dsn string) string {
	if cfg, err := mysql.ParseDSN(dsn); err == nil {
		if cfg.Passwd == "" {
			return cfg.FormatDSN()
		}
		cfg.Passwd = "xxxxx"
		return cfg.FormatDSN()
	}
	at := strings.LastIndex(dsn, "@")
	if at < 0 {
		return dsn
	}
	if colon := strings.Index(dsn[:at], ":"); colon >= 0 {
		return dsn[:colon+1] + "xxxxx" + dsn[at:]
	}
	return dsn
}

// Close closes the prepared statements and the connection pool. Leases must
// be released first.
func (s *Store) Close() error {
	s.mu.Lock()
	for n, st := range s.stmts {
		st.Close()
		delete(s.stmts, n)
	}
	s.mu.Unlock()
	return errors.Join(s.wdb.Close(), s.db.Close())
}

// DB returns the underlying pool, whose connections carry the Store's session
// settings (UTC, sql_mode, utf8mb4).
func (s *Store) DB() *sql.DB { return s.db }

// Database is the index database's name.
func (s *Store) Database() string { return s.database }

// nullString maps "" to SQL NULL.
func nullString(v string) sql.NullString { return sql.NullString{String: v, Valid: v != ""} }
