package capture

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// SchemaMismatchError is a table map event whose columns disagree with the
// schema history: capture stops rather than label values with wrong names.
type SchemaMismatchError struct {
	Table string
	Pos   binlogpos.Position
	Err   error
}

func (e *SchemaMismatchError) Error() string {
	return fmt.Sprintf("schema history of %s disagrees with the binlog at %s: %v", e.Table, e.Pos, e.Err)
}

func (e *SchemaMismatchError) Unwrap() error { return e.Err }

type resolvedTable struct {
	def     *schema.Table
	version uint32
	// checked is the shape of the last table map found to agree with def:
	// OLTP traffic sends a table map before every statement, and comparing
	// bytes is cheaper than checking again.
	checked tableMapShape
	// columns is the JSON array of def's column names: the stored images'
	// column list (change.Event.Columns).
	columns []byte
	// keys are the positions of def's key columns (rowimage.KeyColumns), nil
	// when def has none: rowimage.KeyOfValues then names the error.
	keys []int
}

// newResolved is the resolved form of version of def. A column name that
// is not UTF-8 leaves columns nil: its events are encoded as objects, whose
// encoder names the column in its error.
func newResolved(def *schema.Table, version uint32) *resolvedTable {
	names, _ := rowimage.ColumnList(def)
	keys, _ := rowimage.KeyColumns(def)
	return &resolvedTable{def: def, version: version, columns: names, keys: keys}
}

// tableMapShape is what schema.CheckTableMap reads of a table map event.
type tableMapShape struct {
	valid  bool
	types  []byte
	meta   []uint16
	names  [][]byte
	schema string
	table  string
}

// sameShape reports whether tm has the shape remembered in s.
func (s *tableMapShape) sameShape(tm *replication.TableMapEvent) bool {
	return s.valid && string(tm.Schema) == s.schema && string(tm.Table) == s.table && bytes.Equal(tm.ColumnType, s.types) &&
		slices.Equal(tm.ColumnMeta, s.meta) && slices.EqualFunc(tm.ColumnName, s.names, bytes.Equal)
}

// remember keeps a copy of tm's shape.
func (s *tableMapShape) remember(tm *replication.TableMapEvent) {
	*s = tableMapShape{valid: true, types: bytes.Clone(tm.ColumnType), meta: slices.Clone(tm.ColumnMeta),
		schema: string(tm.Schema), table: string(tm.Table)}
	for _, n := range tm.ColumnName {
		s.names = append(s.names, bytes.Clone(n))
	}
}

// tableTracker is the schema history in stream order: DDL events change it
// before the next row event is decoded, and every table map event is checked
// against it.
type tableTracker struct {
	source   string
	log      *slog.Logger
	catalog  *schema.Catalog
	versions map[string]uint32 // schema.table → current version number
	current  map[string]*resolvedTable
	// lenientUntil: up to this position the catalog may already include DDL
	// the stream has not reached (bootstrap raced with DDL), and after an
	// unparsed DDL: a table map that disagrees is taken as the new shape.
	lenientUntil binlogpos.Position
	// unparsed: a DDL since which the tables not yet in confirmed may have
	// changed shape without the history knowing.
	unparsed  bool
	confirmed map[string]bool
	// pendingVersions are versions recorded from table maps, not yet handed
	// to the writer.
	pendingVersions []change.SchemaVersion
}

func newTableTracker(source string, log *slog.Logger) *tableTracker {
	return &tableTracker{source: source, log: log, catalog: schema.NewCatalog(),
		versions: map[string]uint32{}, current: map[string]*resolvedTable{}}
}

func tableKey(schemaName, table string) string { return schemaName + "." + table }

// load installs the newest version of every table from the index.
func (t *tableTracker) load(vers []change.SchemaVersion) {
	for _, v := range vers {
		k := tableKey(v.Schema, v.Table)
		t.versions[k] = v.Version
		if v.Definition == nil {
			t.catalog.Delete(v.Schema, v.Table)
			delete(t.current, k)
			continue
		}
		t.catalog.Put(v.Definition)
		t.current[k] = newResolved(v.Definition, v.Version)
	}
}

// record makes def the newest version of its table and returns the history row.
func (t *tableTracker) record(schemaName, table string, def *schema.Table, ddl string, at binlogpos.Position, seq uint64) change.SchemaVersion {
	k := tableKey(schemaName, table)
	t.versions[k]++
	v := change.SchemaVersion{Source: t.source, Schema: schemaName, Table: table, Version: t.versions[k],
		Seq: seq, BinlogFile: at.File, BinlogPos: at.Pos, DDL: ddl, Definition: def, CreatedAt: time.Now().UTC()}
	if def == nil {
		t.catalog.Delete(schemaName, table)
		delete(t.current, k)
	} else {
		t.catalog.Put(def)
		t.current[k] = newResolved(def, v.Version)
	}
	return v
}

// lenient reports whether a table map of table k at position at that
// disagrees with the history defines the table instead of stopping capture.
func (t *tableTracker) lenient(k string, at binlogpos.Position) bool {
	return (t.unparsed && !t.confirmed[k]) || t.inBootstrapWindow(at)
}

// inBootstrapWindow reports whether at lies before the end of the window in
// which the bootstrap catalog may be ahead of the stream.
func (t *tableTracker) inBootstrapWindow(at binlogpos.Position) bool {
	if t.lenientUntil.IsZero() {
		return false
	}
	c, err := binlogpos.Compare(at, t.lenientUntil)
	return err == nil && c <= 0
}

// applyDDL applies one statement to the history and returns the versions it
// creates.
func (t *tableTracker) applyDDL(defaultSchema, stmt string, at binlogpos.Position, seq uint64) ([]change.SchemaVersion, error) {
	applied, err := schema.ApplyDDL(t.catalog, defaultSchema, stmt)
	if err != nil {
		var unparsed *schema.UnparsedDDLError
		if errors.As(err, &unparsed) || t.inBootstrapWindow(at) {
			// The next table map of each affected table carries its shape.
			t.unparsed = true
			t.confirmed = map[string]bool{}
			t.log.Warn("DDL not applied to schema history; the next table map event of each table it touched defines its columns",
				slog.String("position", at.String()), slog.String("statement", truncate(stmt, 300)), slog.String("reason", err.Error()))
			return nil, nil
		}
		return nil, fmt.Errorf("apply DDL at %s (%s): %w", at, truncate(stmt, 200), err)
	}
	// A rename ends the old name's history, unless the statement gave the
	// name to another table (RENAME TABLE a TO t, b TO a, t TO b): every
	// name's last version is where it ends.
	defined := map[string]bool{}
	for _, tc := range applied.Tables {
		if tc.New != nil {
			defined[tableKey(tc.Schema, tc.Name)] = true
		}
	}
	var out []change.SchemaVersion
	for _, tc := range applied.Tables {
		if schema.IsSystemSchema(tc.Schema) || schema.IsSystemSchema(tc.OldSchema) {
			continue
		}
		if tc.OldName != "" && (tc.OldName != tc.Name || tc.OldSchema != tc.Schema) && !defined[tableKey(tc.OldSchema, tc.OldName)] {
			out = append(out, t.record(tc.OldSchema, tc.OldName, nil, stmt, at, seq))
		}
	}
	for _, tc := range applied.Tables {
		if !schema.IsSystemSchema(tc.Schema) {
			out = append(out, t.record(tc.Schema, tc.Name, tc.New, stmt, at, seq))
		}
	}
	return out, nil
}

// resolve checks a table map event against the history. A table the history
// has not seen is defined from the event's metadata.
func (t *tableTracker) resolve(tm *replication.TableMapEvent, at binlogpos.Position, seq uint64) (*resolvedTable, error) {
	schemaName, table := string(tm.Schema), string(tm.Table)
	if schema.IsSystemSchema(schemaName) {
		return nil, nil
	}
	k := tableKey(schemaName, table)
	cur := t.current[k]
	if cur != nil {
		if cur.checked.sameShape(tm) {
			t.confirm(k)
			return cur, nil
		}
		err := schema.CheckTableMap(cur.def, tm)
		if err == nil {
			cur.checked.remember(tm)
			t.confirm(k)
			return cur, nil
		}
		if !t.lenient(k, at) {
			return nil, &SchemaMismatchError{Table: k, Pos: at, Err: err}
		}
		t.log.Warn("table map disagrees with schema history after an unapplied DDL; taking the binlog's shape",
			slog.String("table", k), slog.String("position", at.String()), slog.String("difference", err.Error()))
	}
	var hint *schema.Table
	if cur != nil {
		hint = cur.def
	}
	def, err := schema.FromTableMap(schemaName, table, tm, hint)
	if err != nil {
		return nil, fmt.Errorf("table %s at %s is not in schema history and its table map cannot define it: %w", k, at, err)
	}
	v := t.record(schemaName, table, def, "-- defined from binlog table map metadata", at, seq)
	t.pendingVersions = append(t.pendingVersions, v)
	t.confirm(k)
	return t.current[k], nil
}

func (t *tableTracker) confirm(k string) {
	if t.unparsed {
		t.confirmed[k] = true
	}
}

// forRows returns the definition a rows event is decoded with.
func (t *tableTracker) forRows(tm *replication.TableMapEvent, at binlogpos.Position, seq uint64) (*resolvedTable, error) {
	if tm == nil {
		return nil, fmt.Errorf("rows event at %s without a table map", at)
	}
	if schema.IsSystemSchema(string(tm.Schema)) {
		return nil, nil
	}
	rt := t.current[tableKey(string(tm.Schema), string(tm.Table))]
	if rt == nil {
		return t.resolve(tm, at, seq)
	}
	return rt, nil
}

// takeVersions returns the versions recorded from table maps since the last call.
func (t *tableTracker) takeVersions() []change.SchemaVersion {
	v := t.pendingVersions
	t.pendingVersions = nil
	return v
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
