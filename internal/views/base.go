package views

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// A table's base is its rows at the session's snapshot (the table file
// with its chain applied, every column as stored) in a DuckDB database
// file with an index on the table's key: WriteBase writes it once per
// snapshot, and any session whose views read that snapshot, at any cut
// after it, attaches it read-only (UseBase) and reads the table there
// with the changes after the snapshot laid over it (the overlay: the
// newest effect of each key of the tail's window, in a table of the
// session with an index on the key). A lookup by key then reads one
// entry of each index and no table is rebuilt at the cut: the SQL port's
// point lookups at a moment (docs/sql-port.md).

// baseTable is the table a base file holds.
const baseTable = "rows"

// CanUseBase reports whether table name (schema.table) can be read
// through a base: it has a key and a chain (not always written in full),
// and its shape at the cut is the snapshot's (no file of it at the cut).
func (s *Session) CanUseBase(name string) bool {
	t, ok := s.table(name)
	if !ok || t.fullOnly() || s.opt.Raw {
		return false
	}
	if s.tail != nil && (s.tail.Shapes[name] != nil || s.tail.Files[name] != "") {
		return false
	}
	key, err := s.key(t)
	return err == nil && len(key) > 0
}

// BaseSnapshot is the snapshot a base written now holds the rows of: the
// one the session's views read.
func (s *Session) BaseSnapshot() string { return s.loaded }

// WriteBase writes the base of table name (CanUseBase) to a new DuckDB
// database file at path, in a folder the session may write (its temp
// folder, or SessionOptions.SharedDir). On failure nothing is left at
// path.
func (s *Session) WriteBase(ctx context.Context, name, path string) (err error) {
	if !s.CanUseBase(name) {
		return fmt.Errorf("views: table %s cannot be read through a base (no key, always written in full, or reshaped after the snapshot)", name)
	}
	t, _ := s.table(name)
	key, err := s.key(t)
	if err != nil {
		return err
	}
	p, err := absPath(path)
	if err != nil {
		return err
	}
	const alias = `"dbtrail_base_write"`
	if _, err := s.conn.ExecContext(ctx, "ATTACH "+quoteString(p)+" AS "+alias); err != nil {
		return interrupted(fmt.Errorf("views: write the base of %s: %w", name, err))
	}
	defer func() {
		if _, derr := s.conn.ExecContext(context.WithoutCancel(ctx), "DETACH "+alias); derr != nil && err == nil {
			err = fmt.Errorf("views: write the base of %s: %w", name, derr)
		}
		if err != nil {
			os.Remove(path)
			os.Remove(path + ".wal")
		}
	}()
	dir := filepath.ToSlash(filepath.Join(s.opt.SourceDir, snapshot.SnapshotsDir, s.loaded))
	for _, q := range []string{
		fmt.Sprintf("CREATE TABLE %s.%s AS\n%s", alias, baseTable, chainSelect(dir, t, joinIdents(t.Columns))),
		fmt.Sprintf("CREATE INDEX %s ON %s.%s (%s)", quoteIdent("key"), alias, baseTable, joinIdents(key)),
	} {
		if _, err := s.conn.ExecContext(ctx, q); err != nil {
			return interrupted(fmt.Errorf("views: write the base of %s: %w", name, err))
		}
	}
	return nil
}

// overlaySchema holds the session's overlays, one table per table read
// through a base.
const overlaySchema = "dbtrail_overlay"

// UseBase points the view of table name at its base in the DuckDB file
// path (WriteBase's, of the snapshot the session reads) with the tail's
// changes of it up to the cut laid over it, until the views are next
// loaded (Reload, a move of the tail). The file is attached read-only
// once per session; the table's window is staged first when it is
// pending.
func (s *Session) UseBase(ctx context.Context, name, path string) error {
	if s.based[name] == path {
		return nil
	}
	if !s.CanUseBase(name) {
		return fmt.Errorf("views: table %s cannot be read through a base", name)
	}
	t, _ := s.table(name)
	key, err := s.key(t)
	if err != nil {
		return err
	}
	alias, err := s.attachBase(ctx, path)
	if err != nil {
		return err
	}
	if err := s.stagePending(ctx, map[string]bool{name: true}, false); err != nil {
		return err
	}
	view := quoteIdent(t.Schema) + "." + quoteIdent(t.Table)
	base := quoteIdent(alias) + "." + baseTable
	var stmts []string
	var state *overlayState
	if win := s.windowOf(name); win != nil {
		if stmts, state, err = s.overlayStmts(name, t, win); err != nil {
			return err
		}
		overlay := overlayName(name)
		stmts = append(stmts,
			fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s ON %s (%s)", quoteIdent("key of "+name), overlay, joinIdents(key)),
			fmt.Sprintf(`CREATE OR REPLACE VIEW %[1]s AS
SELECT %[2]s FROM (
    SELECT %[3]s FROM %[4]s AS dbtrail_base ANTI JOIN %[5]s AS dbtrail_window ON %[6]s
    UNION ALL
    SELECT %[3]s FROM %[5]s WHERE %[7]s = 'u'
)`, view, typedList(t, s.opt.Exact), joinIdents(t.Columns), base, overlay, win.KeyMatch("dbtrail_base", "dbtrail_window"), quoteIdent(win.OpCol)))
	} else {
		stmts = append(stmts, fmt.Sprintf("CREATE OR REPLACE VIEW %s AS SELECT %s FROM %s", view, typedList(t, s.opt.Exact), base))
	}
	if err := s.execAtomically(ctx, stmts); err != nil {
		return interrupted(fmt.Errorf("views: read %s through its base: %w", name, err))
	}
	if state != nil {
		s.recordOverlays(map[string]*overlayState{name: state})
	}
	delete(s.views, name) // its view reads the base now: made again at the next load
	keys, err := s.overlayKeys(ctx, name, t, key)
	if err != nil {
		return err
	}
	if s.based == nil {
		s.based, s.lookups = map[string]string{}, map[string]*baseLookup{}
	}
	s.based[name] = path
	s.lookups[name] = &baseLookup{key: key, overlay: keys, sql: fmt.Sprintf("SELECT %s FROM %s", typedList(t, s.opt.Exact), base)}
	return nil
}

// baseLookup is what BaseLookup needs of a table read through its base:
// its key columns, the keys its overlay holds (nil: not known, when the
// key is not all integers, or the overlay is large) and the SELECT of its
// rows at the snapshot alone.
type baseLookup struct {
	key     []string
	overlay map[string]bool
	sql     string
}

// overlayKeyLimit is the largest overlay whose keys BaseLookup knows.
const overlayKeyLimit = 200_000

// overlayKeys reads the keys of t's overlay (the changes up to the cut)
// when every key column is an integer NOT NULL and its view shows it as
// stored: each key as its values' decimal text joined by commas. nil
// when not, or when the overlay holds more than overlayKeyLimit keys; an
// empty set when the table has no change up to the cut.
func (s *Session) overlayKeys(ctx context.Context, name string, t TableRef, key []string) (map[string]bool, error) {
	cols := make([]string, len(key))
	for i, k := range key {
		j := slices.Index(t.Columns, k)
		if j < 0 || t.Defs == nil {
			return nil, nil
		}
		c := &t.Defs[j]
		if class, _ := rowimage.ClassOf(c); class != rowimage.ClassInteger || c.Nullable || typedType(c) != "" {
			return nil, nil
		}
		cols[i] = "CAST(" + quoteIdent(k) + " AS VARCHAR)"
	}
	keys := map[string]bool{}
	if s.windowOf(name) == nil {
		return keys, nil
	}
	overlay := overlayName(name)
	rows, err := s.conn.QueryContext(ctx, fmt.Sprintf("SELECT concat_ws(',', %s) FROM %s LIMIT %d", strings.Join(cols, ", "), overlay, overlayKeyLimit+1))
	if err != nil {
		return nil, interrupted(fmt.Errorf("views: read the overlay of %s: %w", name, err))
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("views: read the overlay of %s: %w", name, err)
		}
		keys[k] = true
	}
	if err := rows.Err(); err != nil {
		return nil, interrupted(fmt.Errorf("views: read the overlay of %s: %w", name, err))
	}
	if len(keys) > overlayKeyLimit {
		return nil, nil
	}
	return keys, nil
}

// BaseLookup answers whether a statement reading table name (schema.table)
// by one key alone may read the table's base in place of its view: the
// table is read through its base now (UseBase, for the loaded views), its
// key columns are integers, vals binds every one of them (column name,
// case-insensitive, to an integer literal's text) and the changes up to
// the cut hold no row of that key. It returns the SELECT of the base's
// rows (the view's columns and types) to read in place of the view: the
// same answer, without planning the overlay's join.
func (s *Session) BaseLookup(name string, vals map[string]string) (string, bool) {
	l := s.lookups[name]
	if l == nil || l.overlay == nil || s.based[name] == "" {
		return "", false
	}
	parts := make([]string, len(l.key))
	for i, k := range l.key {
		v, ok := vals[strings.ToLower(k)]
		if !ok {
			return "", false
		}
		n, ok := new(big.Int).SetString(v, 10)
		if !ok {
			return "", false
		}
		parts[i] = n.String()
	}
	if l.overlay[strings.Join(parts, ",")] {
		return "", false
	}
	return l.sql, true
}

// windowOf is the tail's window of table name, nil when the table has no
// change up to the cut.
func (s *Session) windowOf(name string) *Window {
	if s.tail == nil {
		return nil
	}
	return s.tail.Windows[name]
}

// attachBase attaches the base file path read-only, once per session, and
// returns its alias.
func (s *Session) attachBase(ctx context.Context, path string) (string, error) {
	if a := s.attached[path]; a != "" {
		return a, nil
	}
	p, err := absPath(path)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("views: base file: %w", err)
	}
	s.attaches++
	alias := fmt.Sprintf("dbtrail_base_%d", s.attaches)
	if _, err := s.conn.ExecContext(ctx, fmt.Sprintf("ATTACH %s AS %s (READ_ONLY)", quoteString(p), quoteIdent(alias))); err != nil {
		return "", interrupted(fmt.Errorf("views: attach base %s: %w", filepath.Base(path), err))
	}
	if s.attached == nil {
		s.attached = map[string]string{}
	}
	s.attached[path] = alias
	return alias, nil
}

// DetachBase detaches the base file path when the session attached it;
// a view still reading it fails from then on, naming it, until the views
// are next loaded.
func (s *Session) DetachBase(ctx context.Context, path string) error {
	alias := s.attached[path]
	if alias == "" {
		return nil
	}
	delete(s.attached, path)
	for name, p := range s.based {
		if p == path {
			delete(s.based, name)
			delete(s.lookups, name)
		}
	}
	if _, err := s.conn.ExecContext(ctx, "DETACH "+quoteIdent(alias)); err != nil {
		return fmt.Errorf("views: detach base %s: %w", filepath.Base(path), err)
	}
	return nil
}
