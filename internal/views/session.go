package views

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// SessionOptions are what a query session reads and its bounds.
type SessionOptions struct {
	Options
	// MemoryLimit is DuckDB's memory_limit, e.g. "1GB" (required).
	MemoryLimit string
	// Threads is DuckDB's threads (at least 1).
	Threads int
	// TempDir is where DuckDB spills (temp_directory): "" makes a folder
	// under os.TempDir that Close removes.
	TempDir string
	// Sandbox also cuts DuckDB off every file outside SourceDir and its
	// temp folder, and the network (sandbox.go), for questions from
	// untrusted callers and `dbtrail query` by default.
	Sandbox bool
	// Tail, when set, prepares the changes after a snapshot into the
	// folder it is given (a new one under the session's temp folder at
	// every Reload) and returns them: the views then read that snapshot
	// with its Tail (docs/tail.md), not current. Not with Snapshot. (With
	// Sandbox, DuckDB may read the session's temp folder, where the tails
	// are staged: a TempDir given is allowed whole.)
	Tail func(ctx context.Context, dir string) (*Tail, error)
	// MySQLNulls orders NULL as MySQL does, first ascending and last
	// descending (DuckDB's default is last both ways): the SQL port's.
	MySQLNulls bool
	// SharedDir, when set, is a folder DuckDB may also read and write with
	// Sandbox: where sessions share tables staged at a cut (WriteTable,
	// ReadTable; the SQL port's cache).
	SharedDir string
}

// Session is an in-memory DuckDB with the views of one snapshot loaded, for
// read-only queries (`dbtrail query`). Its views are generated in memory
// from the snapshot's files and footers, never read from views.sql. Its
// settings (memory_limit, threads, temp_directory, TimeZone UTC, no
// extension installs) are locked once the views are loaded.
//
// A Session is not safe for concurrent use.
type Session struct {
	opt      SessionOptions
	db       *sql.DB
	conn     *sql.Conn
	tmp      string // temp folder to remove, or ""
	loaded   string // snapshot id whose shape the views have
	text     []byte // the views' SQL as loaded
	tables   []TableRef
	base     []TableRef // with Tail: the tables of the loaded snapshot (tables are those at the cut)
	tail     *Tail      // the tail the views read, with Tail
	tailDir  string     // its folder, removed when replaced
	tailRoot string     // where tail folders are made
	// attached are the base files attached (UseBase), by path, with their
	// alias; attaches counts them, naming the next; based the tables whose
	// view reads a base now, with its path, until the views are loaded again.
	attached map[string]string
	attaches int
	based    map[string]string
	lookups  map[string]*baseLookup // of the based tables (BaseLookup)
	// views are the statements each table's view was made with (a tail's
	// views: replaceViews makes again only those that changed); nil after
	// replace.
	views map[string]string
	// overlays are the states of the tables' overlays (overlay.go);
	// overlayReads counts the window files read into them.
	overlays     map[string]*overlayState
	overlayReads int
	viewsMade    int // views made by replaceViews and stagePending (tests)
}

// OpenSession opens the session of o: it checks the snapshot to read
// exists, opens DuckDB with o's bounds and loads the views.
func OpenSession(ctx context.Context, o SessionOptions) (_ *Session, err error) {
	if o.MemoryLimit == "" || o.Threads < 1 {
		return nil, fmt.Errorf("views: session needs a memory limit and at least one thread (got %q, %d)", o.MemoryLimit, o.Threads)
	}
	if o.Snapshot != "" {
		if _, err := snapshot.ParseSnapshotID(o.Snapshot); err != nil {
			return nil, fmt.Errorf("views: %w", err)
		}
	}
	if o.Tail != nil && o.Snapshot != "" {
		return nil, fmt.Errorf("views: a session with a tail reads the newest snapshot, not snapshot %s", o.Snapshot)
	}
	s := &Session{opt: o}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	tmp := o.TempDir
	if tmp == "" {
		if tmp, err = os.MkdirTemp("", "dbtrail-query-"); err != nil {
			return nil, fmt.Errorf("views: duckdb temp dir: %w", err)
		}
		s.tmp = tmp
	}
	s.tailRoot = tmp
	if s.db, err = sql.Open("duckdb", ""); err != nil {
		return nil, fmt.Errorf("views: open duckdb: %w", err)
	}
	if s.conn, err = s.db.Conn(ctx); err != nil {
		return nil, fmt.Errorf("views: open duckdb: %w", err)
	}
	for _, set := range []string{
		"SET memory_limit=" + quoteString(o.MemoryLimit),
		"SET threads=" + strconv.Itoa(o.Threads),
		"SET temp_directory=" + quoteString(filepath.ToSlash(tmp)),
		"SET TimeZone='UTC'",
		"SET autoinstall_known_extensions=false",
		"SET parquet_metadata_cache=true", // files are immutable: snapshots, tails, staged tables
	} {
		if _, err := s.conn.ExecContext(ctx, set); err != nil {
			return nil, fmt.Errorf("views: duckdb %s: %w", set, err)
		}
	}
	if o.MySQLNulls {
		if _, err := s.conn.ExecContext(ctx, "SET default_null_order='nulls_first_on_asc_last_on_desc'"); err != nil {
			return nil, fmt.Errorf("views: duckdb null order: %w", err)
		}
	}
	if _, err := s.Reload(ctx); err != nil {
		return nil, err
	}
	if o.Sandbox {
		if err := s.sandbox(ctx); err != nil {
			return nil, err
		}
	}
	if _, err := s.conn.ExecContext(ctx, "SET lock_configuration=true"); err != nil {
		return nil, fmt.Errorf("views: duckdb lock configuration: %w", err)
	}
	return s, nil
}

// Snapshot returns the id of the snapshot whose shape the views have.
func (s *Session) Snapshot() string { return s.loaded }

// Tables returns the tables of the loaded views.
func (s *Session) Tables() []TableRef { return s.tables }

// Reload brings the views up to the snapshot the session reads: when it is
// current and current has moved to a snapshot of another shape, the views
// are replaced (views of tables gone are dropped). It reports whether the
// views changed. The views read through current either way; only their
// columns need reloading.
//
// With a tail (SessionOptions.Tail) every Reload prepares a new one, cut at
// one transaction for every table, and replaces the views with views of its
// snapshot and changes; it reports whether tables or columns changed.
func (s *Session) Reload(ctx context.Context) (bool, error) {
	if s.opt.Tail != nil {
		return s.reloadTail(ctx)
	}
	id := s.opt.Snapshot
	if id == "" {
		cur := s.opt.SnapshotDir()
		if _, err := os.Lstat(cur); errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("views: %s has no published snapshot (%s does not exist): run a backup first", s.opt.SourceDir, cur)
		}
		var err error
		if id, err = snapshot.ResolveCurrent(s.opt.SourceDir); err != nil {
			return false, fmt.Errorf("views: %w", err)
		}
	}
	if id == s.loaded {
		return false, nil
	}
	dir := s.opt.SnapshotDir()
	if _, err := os.Stat(filepath.Join(dir, snapshot.ManifestName)); err != nil {
		return false, fmt.Errorf("views: snapshot %s: %w", id, err)
	}
	tables, err := TablesFromSnapshot(dir)
	if err != nil {
		return false, err
	}
	if len(tables) == 0 {
		return false, fmt.Errorf("views: snapshot %s holds no table", id)
	}
	var b bytes.Buffer
	if err := Write(&b, s.opt.Options, tables); err != nil {
		return false, err
	}
	changed := !bytes.Equal(b.Bytes(), s.text)
	if changed {
		if err := s.replace(ctx, tables, b.Bytes()); err != nil {
			return false, err
		}
	}
	s.loaded = id
	return changed, nil
}

// replace drops the views of tables no longer present, runs pre (the
// overlays' statements) and loads text, in one transaction: on an error
// the views are as they were.
func (s *Session) replace(ctx context.Context, tables []TableRef, text []byte, pre ...string) error {
	if err := s.execAtomically(ctx, append(append(s.dropGone(tables), pre...), string(text))); err != nil {
		return fmt.Errorf("views: load views of %s: %w", s.opt.SnapshotDir(), err)
	}
	s.tables, s.text, s.views, s.based, s.lookups = tables, text, nil, nil, nil
	return nil
}

// dropGone are the statements dropping the views of the loaded tables that
// tables no longer holds.
func (s *Session) dropGone(tables []TableRef) []string {
	keep := map[[2]string]bool{}
	for _, t := range tables {
		keep[[2]string{t.Schema, t.Table}] = true
	}
	var stmts []string
	for _, t := range s.tables {
		if !keep[[2]string{t.Schema, t.Table}] {
			stmts = append(stmts, "DROP VIEW IF EXISTS "+quoteIdent(t.Schema)+"."+quoteIdent(t.Table))
		}
	}
	return stmts
}

// ErrNotReadOnly is returned for a statement a session refuses.
var ErrNotReadOnly = errors.New("only read-only statements are allowed: SELECT (with WITH, VALUES, FROM, DESCRIBE, SHOW, SUMMARIZE) and EXPLAIN of one")

// explainPrefix matches EXPLAIN and its options before the statement it
// explains.
var explainPrefix = regexp.MustCompile(`(?is)^\s*EXPLAIN\s+(?:ANALY[SZ]E\s+|\([^)]*\)\s*)*`)

// Query runs one read-only statement and returns its rows and whether it is
// an EXPLAIN. Anything but SELECT (in all its forms, DESCRIBE, SHOW and
// SUMMARIZE included) and EXPLAIN of a SELECT is refused with
// ErrNotReadOnly before it runs, as is more than one statement and a call
// of a function the sandbox refuses (checkStatement); only then are the
// tail's pending tables it names staged. Binding, planning (constant
// folding included) and running all happen under ctx: its end interrupts
// DuckDB (which stops at its next check of the interrupt). args are bound
// to the statement's parameters (?) by DuckDB, never spliced into its text.
func (s *Session) Query(ctx context.Context, stmt string, args ...any) (rows *sql.Rows, explain bool, err error) {
	return s.QueryAfter(ctx, stmt, nil, args...)
}

// QueryAfter is Query calling before, when not nil, with the tables the
// statement names (schema.table, sorted) once it passed the check and
// before anything is staged or run: the SQL port stages them at its cut
// (WriteTable, ReadTable) from the one parse.
func (s *Session) QueryAfter(ctx context.Context, stmt string, before func(ctx context.Context, names []string) error,
	args ...any) (rows *sql.Rows, explain bool, err error) {
	c, err := checkStatement(ctx, stmt)
	if err != nil {
		return nil, false, err
	}
	if before != nil {
		if err := before(ctx, sortedNames(c.names)); err != nil {
			return nil, false, err
		}
	}
	if err := s.stagePending(ctx, c.names, false); err != nil {
		return nil, false, err
	}
	rows, err = s.conn.QueryContext(ctx, stmt, args...)
	if err != nil && isUnstaged(err) {
		// A table function read a pending table by a name the parse does
		// not show (query_table): stage them all, and bind again.
		if err := s.stagePending(ctx, nil, true); err != nil {
			return nil, false, err
		}
		rows, err = s.conn.QueryContext(ctx, stmt, args...)
	}
	return rows, c.explain, interrupted(err)
}

// ErrInterrupted is the error of a statement DuckDB stopped because its
// context ended (Query's time limit).
var ErrInterrupted = errors.New("views: the statement was interrupted")

// interrupted marks DuckDB's interrupt error as ErrInterrupted.
func interrupted(err error) error {
	var de *duckdb.Error
	if errors.As(err, &de) && de.Type == duckdb.ErrorTypeInterrupt {
		return fmt.Errorf("%w: %w", ErrInterrupted, err)
	}
	return err
}

// Close closes DuckDB and removes the temp folder the session made.
func (s *Session) Close() error {
	var errs []error
	if s.tailDir != "" {
		errs = append(errs, os.RemoveAll(s.tailDir))
	}
	if s.conn != nil {
		errs = append(errs, s.conn.Close())
	}
	if s.db != nil {
		errs = append(errs, s.db.Close())
	}
	if s.tmp != "" {
		errs = append(errs, os.RemoveAll(s.tmp))
	}
	return errors.Join(errs...)
}
