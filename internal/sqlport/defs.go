package sqlport

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/views"
)

// tableDef is one table's stored definition at the session's moment and
// the DuckDB types of its view's columns.
type tableDef struct {
	// def is the stored definition (schema.Table): the base snapshot's
	// footer, or the tail's shape when a schema change after the snapshot
	// changed the table's columns; nil for a table file without dbtrail's
	// footer.
	def *schema.Table
	// create is the CREATE TABLE at the moment: the manifest's (a
	// metadata-only change), else the footer's, else rendered from def
	// (snapshot.CreateTableSQL) for a shape after an ALTER.
	create string
	// cols are the view's columns, their DuckDB types by lower-case name.
	cols  []string
	types map[string]string
	// collations are the declared collations of its columns
	// (schema.ColumnCollations of create).
	collations map[string]string
	// key tells which snapshot and shape the entry is of.
	key defKey
}

// defKey names what a tableDef was read from: the views' snapshot and the
// tail's shape of the table (nil: the snapshot's).
type defKey struct {
	snapshot string
	shape    *schema.Table
	// defined is the table's definition at the cut when a schema change
	// after the snapshot moved only its definition (views.Tail.Defined),
	// createFrom the later snapshot holding its CREATE TABLE then.
	defined    *schema.Table
	createFrom string
}

// column returns the stored definition of the view column name and
// whether it is in the primary key, or nil.
func (d *tableDef) column(name string) (*schema.Column, bool) {
	if d == nil || d.def == nil {
		return nil, false
	}
	i := d.def.ColumnIndex(name)
	if i < 0 {
		return nil, false
	}
	return &d.def.Columns[i], d.def.KeyKind == schema.KeyPrimary && containsFold(d.def.Key, name)
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// tableRef finds schema.table among the session's views.
func tableRef(s *views.Session, schemaName, table string) (views.TableRef, bool) {
	for _, t := range s.Tables() {
		if t.Schema == schemaName && t.Table == table {
			return t, true
		}
	}
	return views.TableRef{}, false
}

// tableDef returns the definition of schema.table at the session's
// moment, read once per snapshot and shape and kept in h.defs.
func (h *handler) tableDef(ctx context.Context, s *views.Session, schemaName, table string) (*tableDef, error) {
	if _, ok := tableRef(s, schemaName, table); !ok {
		return nil, nil
	}
	name := schemaName + "." + table
	key := defKeyOf(s, name)
	if d := h.defs[name]; d != nil && d.key == key {
		return d, nil
	}
	d, err := readDef(ctx, h.cfg.Session.SourceDir, s, schemaName, table, key)
	if err != nil {
		return nil, err
	}
	if h.defs == nil {
		h.defs = map[string]*tableDef{}
	}
	h.defs[name] = d
	return d, nil
}

// defKeyOf is the key of the definition of table name (schema.table) at
// the session's moment: its snapshot, and the tail's shape of the table
// when the tail has one.
func defKeyOf(s *views.Session, name string) defKey {
	key := defKey{snapshot: s.Snapshot()}
	if t := s.Tail(); t != nil && t.Files[name] != "" {
		key.shape = t.Shapes[name]
	} else if t != nil && t.Defined[name] != nil {
		key.defined, key.createFrom = t.Defined[name], t.CreateFrom[name]
	}
	return key
}

// readDef reads the definition of schema.table of key (storedDef) and the
// view's DuckDB column types.
func readDef(ctx context.Context, sourceDir string, s *views.Session, schemaName, table string, key defKey) (*tableDef, error) {
	d := &tableDef{key: key, types: map[string]string{}}
	var err error
	if d.def, d.create, d.collations, err = storedDef(sourceDir, schemaName, table, key); err != nil {
		return nil, err
	}
	cts, err := columnTypes(ctx, s, fmt.Sprintf("SELECT * FROM %s.%s", views.QuoteIdent(schemaName), views.QuoteIdent(table)))
	if err != nil {
		return nil, err
	}
	for _, ct := range cts {
		d.cols = append(d.cols, ct.Name())
		d.types[strings.ToLower(ct.Name())] = ct.DatabaseTypeName()
	}
	return d, nil
}

// columnTypes are the DuckDB column types of query q (a SELECT, with its
// params) in session s, read from a run of it limited to no rows.
func columnTypes(ctx context.Context, s *views.Session, q string, params ...any) ([]*sql.ColumnType, error) {
	rows, _, err := s.Query(ctx, "SELECT * FROM ("+q+"\n) AS \"dbtrail columns\" LIMIT 0", params...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return rows.ColumnTypes()
}

// storedDef reads the definition of schema.table of key, its CREATE TABLE
// and its columns' declared collations (schema.ColumnCollations): the
// tail's shape (its CREATE TABLE rendered, which names none: the
// snapshot's collations carried), the definition at the cut when only it
// moved since the snapshot (a later snapshot's CREATE TABLE of then; else
// one rendered, the snapshot's collations carried), or the snapshot's
// footer with the manifest's CREATE TABLE over it. A collation is carried
// to a column of the same name and character set (carried): one an ALTER
// after the snapshot changed without changing the character set is not
// seen until a snapshot holds it.
func storedDef(sourceDir, schemaName, table string, key defKey) (*schema.Table, string, map[string]string, error) {
	if key.shape != nil {
		create := snapshot.CreateTableSQL(key.shape)
		def, snapCreate, err := snapshotDef(sourceDir, key.snapshot, schemaName, table)
		if err != nil || def == nil { // a table the snapshot lacks: no collation known
			return key.shape, create, carried(&schema.Table{}, nil, key.shape), nil
		}
		co, err := collationsOf(schemaName, table, snapCreate)
		return key.shape, create, carried(def, co, key.shape), err
	}
	if key.defined != nil && key.createFrom != "" {
		if _, create, err := snapshotDef(sourceDir, key.createFrom, schemaName, table); err == nil && create != "" {
			co, err := collationsOf(schemaName, table, create)
			return key.defined, create, co, err
		}
	}
	def, create, err := snapshotDef(sourceDir, key.snapshot, schemaName, table)
	if err != nil {
		return nil, "", nil, err
	}
	co, err := collationsOf(schemaName, table, create)
	if key.defined != nil {
		return key.defined, snapshot.CreateTableSQL(key.defined), carried(def, co, key.defined), err
	}
	return def, create, co, err
}

// unknownCollation marks, in a table's collations, a text column whose
// collation is not known: one added after the snapshot (the schema
// history keeps no COLLATE), until a snapshot holds the table's CREATE
// TABLE. A comparison of it is refused (collationOf).
const unknownCollation = "?"

// carried are the declared collations co of the columns of from that to
// has too, with the same character set; a text column of to that from
// lacks, or whose character set changed, is unknownCollation.
func carried(from *schema.Table, co map[string]string, to *schema.Table) map[string]string {
	if from == nil {
		return co // no definition to compare with: as the snapshot declared
	}
	out := map[string]string{}
	for name, c := range co {
		i, j := from.ColumnIndex(name), to.ColumnIndex(name)
		if i >= 0 && j >= 0 && from.Columns[i].Charset == to.Columns[j].Charset {
			out[to.Columns[j].Name] = c
		}
	}
	for _, c := range to.Columns {
		i := from.ColumnIndex(c.Name)
		if isText(c) && (i < 0 || from.Columns[i].Charset != c.Charset) {
			out[c.Name] = unknownCollation
		}
	}
	return out
}

// collationsOf are the declared collations of the columns of CREATE TABLE
// create (none when it is "").
func collationsOf(schemaName, table, create string) (map[string]string, error) {
	if create == "" {
		return nil, nil
	}
	co, err := schema.ColumnCollations(create)
	if err != nil {
		return nil, fmt.Errorf("definition of %s.%s: %w", schemaName, table, err)
	}
	return co, nil
}

// snapshotDef reads the definition of schema.table in snapshot id: its
// footer's, with the manifest's CREATE TABLE over the footer's.
func snapshotDef(sourceDir, id, schemaName, table string) (*schema.Table, string, error) {
	dir := filepath.Join(sourceDir, snapshot.SnapshotsDir, id)
	snap, err := snapshot.OpenSnapshot(dir)
	if err != nil {
		return nil, "", fmt.Errorf("definition of %s.%s: %w", schemaName, table, err)
	}
	foot, err := snapshot.ReadFooter(filepath.Join(dir, schemaName, table+".parquet"))
	if err != nil {
		return nil, "", fmt.Errorf("definition of %s.%s: %w", schemaName, table, err)
	}
	def, create := foot.Table, foot.CreateTable
	if mt, ok := snap.Manifest.Table(schemaName, table); ok && mt.CreateTable != "" {
		create = mt.CreateTable
	}
	if create == "" && def != nil {
		create = snapshot.CreateTableSQL(def)
	}
	return def, create, nil
}

// sourceColumns finds, for each result column, the table column it shows:
// a column of the same name (case-insensitive) and the same DuckDB type
// as the column of exactly one table the statement names (a table of the
// session's views whose name, or schema.name, is a word of stmt, and
// that the statement read: a tail's table it did not read is still
// pending, and is not staged for this). The rest are computed columns
// (nil): their types are DuckDB's. The match is
// by name and type, so an expression named as a column of its type takes
// that column's MySQL type, which its values have.
func (h *handler) sourceColumns(ctx context.Context, s *views.Session, stmt string, cts []*sql.ColumnType) ([]*source, error) {
	out := make([]*source, len(cts))
	words := wordsOf(stmt)
	var named []*tableDef
	var names [][2]string
	pending := map[string]bool{}
	if t := s.Tail(); t != nil {
		pending = t.Pending
	}
	for _, t := range s.Tables() {
		if !words[strings.ToLower(t.Table)] || (t.Schema != h.db && !words[strings.ToLower(t.Schema)]) {
			continue
		}
		if pending[t.Schema+"."+t.Table] {
			continue // the statement, run, did not read it: not staged for a guess
		}
		d, err := h.tableDef(ctx, s, t.Schema, t.Table)
		if err != nil {
			return nil, err
		}
		named = append(named, d)
		names = append(names, [2]string{t.Schema, t.Table})
	}
	for i, ct := range cts {
		var found *source
		for j, d := range named {
			if typ, ok := d.types[strings.ToLower(ct.Name())]; !ok || typ != ct.DatabaseTypeName() {
				continue
			}
			c, pk := d.column(ct.Name())
			if c == nil {
				continue
			}
			if found != nil {
				found = nil // two tables have it: not told which
				break
			}
			found = &source{schema: names[j][0], table: names[j][1], col: c, pk: pk, def: d.def, collation: d.collations[c.Name]}
		}
		out[i] = found
	}
	return out, nil
}

// source is the table column a result column shows.
type source struct {
	schema, table string
	col           *schema.Column
	pk            bool
	def           *schema.Table
	collation     string // its declared collation, "" for its charset's default
}

// wordsOf are the identifiers and words of stmt, lower case (quotes and
// backticks dropped): which tables a statement may name.
func wordsOf(stmt string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(stmt), func(r rune) bool {
		return !(r == '_' || r == '$' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127)
	}) {
		out[w] = true
	}
	return out
}
