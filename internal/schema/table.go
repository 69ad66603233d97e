// Package schema models the shape of a source table as dbtrail knows it at one
// point of the binlog stream: its columns with their exact MySQL/MariaDB types
// and the key that identifies a row.
//
// A Table is a value: it is never mutated once published into a History; DDL
// produces a new Table. Definitions are serialised as JSON into the index's
// schema history, so field names are part of the on-disk contract.
package schema

import (
	"fmt"
	"strings"
)

// KeyKind says which columns identify a row of a table.
type KeyKind string

const (
	// KeyPrimary: the table's PRIMARY KEY.
	KeyPrimary KeyKind = "primary"
	// KeyUnique: no primary key; the first UNIQUE index whose columns are all
	// NOT NULL stands in for it (InnoDB makes the same choice).
	KeyUnique KeyKind = "unique"
	// KeyRow: no usable key; every column together is the key. Two identical
	// rows share one key, so such a table's history is a bag, not a map; see
	// README "Tables without a primary key".
	KeyRow KeyKind = "row"
)

// Column is one column of a table.
type Column struct {
	Name string `json:"name"`
	// Type is the lower-case base type name as MariaDB/MySQL spells it in
	// information_schema.COLUMNS.DATA_TYPE: "int", "bigint", "decimal",
	// "varchar", "binary", "enum", "datetime", "uuid", "inet6", ...
	Type string `json:"type"`
	// Unsigned is set for UNSIGNED integer, DECIMAL, FLOAT and DOUBLE columns.
	Unsigned bool `json:"unsigned,omitempty"`
	// Length is the declared length: characters for CHAR/VARCHAR, bytes for
	// BINARY/VARBINARY, bits for BIT. Zero when the type has none.
	Length int `json:"length,omitempty"`
	// Precision and Scale of DECIMAL.
	Precision int `json:"precision,omitempty"`
	Scale     int `json:"scale,omitempty"`
	// FSP is the fractional seconds precision of TIME, DATETIME, TIMESTAMP.
	FSP int `json:"fsp,omitempty"`
	// Elems are the labels of ENUM and SET, in declaration order.
	Elems []string `json:"elems,omitempty"`
	// Charset of character columns ("utf8mb4", "latin1", "binary", ...).
	Charset  string `json:"charset,omitempty"`
	Nullable bool   `json:"nullable,omitempty"`
	// Generated is GeneratedStored or GeneratedVirtual for a generated
	// column (GENERATED ALWAYS AS, PERSISTENT, VIRTUAL), "" otherwise. Row
	// images carry generated columns' values (MariaDB logs both kinds with
	// binlog_row_image=FULL); snapshots leave them out: see Table.Stored.
	Generated string `json:"generated,omitempty"`
}

// Kinds of generated columns.
const (
	GeneratedStored  = "stored"
	GeneratedVirtual = "virtual"
)

// Table is the definition of one table at one position of the stream.
type Table struct {
	Schema  string   `json:"schema"`
	Name    string   `json:"name"`
	Columns []Column `json:"columns"`
	// Key names the columns that identify a row, in key order. For KeyRow it
	// lists every column.
	Key     []string `json:"key"`
	KeyKind KeyKind  `json:"key_kind"`
	// Charset is the table's default character set, given to character
	// columns that a later ALTER TABLE adds or redefines without one. Empty
	// when unknown.
	Charset string `json:"charset,omitempty"`
	// Indexes are the table's indexes in the server's order (PRIMARY first).
	// They are kept so the key can be chosen again after DDL (KeyKind rules)
	// and unnamed indexes get the names the server gives them.
	Indexes []Index `json:"indexes,omitempty"`
	// Derived are the generated columns that Stored moved out of Columns,
	// in table order. Only a snapshot's definition has them.
	Derived []Column `json:"derived,omitempty"`
}

// Index is one index of a table.
type Index struct {
	Name string `json:"name"`
	// Columns are the indexed columns in index order, spelled as the table's
	// columns are. An expression part has no column and is left out.
	Columns []string `json:"columns"`
	Primary bool     `json:"primary,omitempty"`
	Unique  bool     `json:"unique,omitempty"`
	// Partial is set when a part is a column prefix or an expression: such
	// an index never stands in for a primary key.
	Partial bool `json:"partial,omitempty"`
}

// QualifiedName returns `schema`.`table` as text, for messages.
func (t *Table) QualifiedName() string { return t.Schema + "." + t.Name }

// ColumnIndex returns the position of the named column (case-insensitive, as
// MySQL compares column names) or -1.
func (t *Table) ColumnIndex(name string) int {
	for i, c := range t.Columns {
		if strings.EqualFold(c.Name, name) {
			return i
		}
	}
	return -1
}

// KeyIndexes returns the column positions of the key, in key order.
func (t *Table) KeyIndexes() ([]int, error) {
	idx := make([]int, len(t.Key))
	for i, k := range t.Key {
		j := t.ColumnIndex(k)
		if j < 0 {
			return nil, fmt.Errorf("table %s: key column %q is not a column", t.QualifiedName(), k)
		}
		idx[i] = j
	}
	return idx, nil
}

// ColumnNames returns the column names in table order.
func (t *Table) ColumnNames() []string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return names
}

// Clone returns a deep copy, so DDL can derive a new version without touching
// the published one.
func (t *Table) Clone() *Table {
	c := *t
	c.Columns = make([]Column, len(t.Columns))
	for i, col := range t.Columns {
		col.Elems = append([]string(nil), col.Elems...)
		c.Columns[i] = col
	}
	c.Key = append([]string(nil), t.Key...)
	c.Derived = append([]Column(nil), t.Derived...)
	if t.Indexes != nil {
		c.Indexes = make([]Index, len(t.Indexes))
		for i, ix := range t.Indexes {
			ix.Columns = append([]string(nil), ix.Columns...)
			c.Indexes[i] = ix
		}
	}
	return &c
}

// Stored returns the definition a snapshot keeps of t: its columns without
// the generated ones, which move to Derived. A generated column's value is a
// function of the row's other columns, which the server computes again when
// the row is loaded (a .sql export may not give it a value, and mydumper
// leaves it out of its INSERTs), so a snapshot stores only what the server
// cannot compute, and the dump path and the binlog path agree. t is returned
// as it is when it has no generated column. A table whose key includes a
// generated column cannot be stored without it: that is an error naming the
// table and the column. For a table keyed by all its columns (KeyRow) the
// key becomes the stored columns, which identify the row as well.
func (t *Table) Stored() (*Table, error) {
	if !t.hasGenerated() {
		return t, nil
	}
	s := t.Clone()
	s.Columns, s.Derived = s.Columns[:0], nil
	for _, c := range t.Columns {
		if c.Generated == "" {
			s.Columns = append(s.Columns, c)
			continue
		}
		s.Derived = append(s.Derived, c)
		if t.KeyKind != KeyRow && containsFold(t.Key, c.Name) {
			return nil, fmt.Errorf("table %s: key column %q is a generated column: a snapshot cannot store the key without it", t.QualifiedName(), c.Name)
		}
	}
	if t.KeyKind == KeyRow {
		s.Key = s.ColumnNames()
	}
	return s, nil
}

func (t *Table) hasGenerated() bool {
	for _, c := range t.Columns {
		if c.Generated != "" {
			return true
		}
	}
	return false
}

// IsDerived reports whether name is one of the generated columns Stored
// moved out of Columns.
func (t *Table) IsDerived(name string) bool {
	for _, c := range t.Derived {
		if strings.EqualFold(c.Name, name) {
			return true
		}
	}
	return false
}

func containsFold(names []string, name string) bool {
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}
