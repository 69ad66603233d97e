package schema

import (
	"slices"
	"strings"
)

// tableKey identifies a table. Names compare case-sensitively, as MariaDB
// on Linux does with lower_case_table_names=0.
type tableKey struct{ schema, name string }

// Catalog is the set of table definitions known at one point of the binlog
// stream, with the default character set of each schema.
//
// Tables put into a Catalog are shared, never copied: nobody may mutate a
// *Table after Put (derive a new one with Table.Clone). A Catalog is not
// safe for concurrent use; Clone one to hand it to another goroutine. The
// zero value is an empty catalog ready to use.
type Catalog struct {
	tables         map[tableKey]*Table
	schemaCharsets map[string]string
	serverCharset  string
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog { return &Catalog{} }

// Get returns the definition of schema.table, matching both names exactly.
func (c *Catalog) Get(schema, table string) (*Table, bool) {
	t, ok := c.tables[tableKey{schema, table}]
	return t, ok
}

// Put stores t under (t.Schema, t.Name), replacing any previous definition.
// A nil t is ignored.
func (c *Catalog) Put(t *Table) {
	if t == nil {
		return
	}
	if c.tables == nil {
		c.tables = make(map[tableKey]*Table)
	}
	c.tables[tableKey{t.Schema, t.Name}] = t
}

// Delete forgets schema.table; it does nothing when the table is unknown.
func (c *Catalog) Delete(schema, table string) { delete(c.tables, tableKey{schema, table}) }

// Len returns the number of tables.
func (c *Catalog) Len() int { return len(c.tables) }

// Tables returns every table sorted by schema, then name (byte order).
func (c *Catalog) Tables() []*Table {
	out := make([]*Table, 0, len(c.tables))
	for _, t := range c.tables {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *Table) int {
		if n := strings.Compare(a.Schema, b.Schema); n != 0 {
			return n
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// SchemaTables returns the tables of one schema, sorted by name.
func (c *Catalog) SchemaTables(schema string) []*Table {
	var out []*Table
	for _, t := range c.Tables() {
		if t.Schema == schema {
			out = append(out, t)
		}
	}
	return out
}

// Clone returns a catalog with the same tables (shared, as they are
// immutable) and charsets; changing one catalog's membership leaves the
// other alone.
func (c *Catalog) Clone() *Catalog {
	n := &Catalog{serverCharset: c.serverCharset}
	if c.tables != nil {
		n.tables = make(map[tableKey]*Table, len(c.tables))
		for k, t := range c.tables {
			n.tables[k] = t
		}
	}
	if c.schemaCharsets != nil {
		n.schemaCharsets = make(map[string]string, len(c.schemaCharsets))
		for k, v := range c.schemaCharsets {
			n.schemaCharsets[k] = v
		}
	}
	return n
}

// SetSchemaCharset records the default character set of a schema
// (SCHEMATA.DEFAULT_CHARACTER_SET_NAME); "" forgets it.
func (c *Catalog) SetSchemaCharset(schema, charset string) {
	charset = NormalizeCharset(charset)
	if charset == "" {
		delete(c.schemaCharsets, schema)
		return
	}
	if c.schemaCharsets == nil {
		c.schemaCharsets = make(map[string]string)
	}
	c.schemaCharsets[schema] = charset
}

// SetServerCharset records the server's default character set
// (@@character_set_server), used for schemas whose own is unknown.
func (c *Catalog) SetServerCharset(charset string) { c.serverCharset = NormalizeCharset(charset) }

// SchemaCharsets returns a copy of the recorded schema character sets.
func (c *Catalog) SchemaCharsets() map[string]string {
	out := make(map[string]string, len(c.schemaCharsets))
	for k, v := range c.schemaCharsets {
		out[k] = v
	}
	return out
}

// SchemaCharset returns the default character set a new table of schema
// gets: the schema's, else the server's, else DefaultCharset.
func (c *Catalog) SchemaCharset(schema string) string {
	if cs := c.schemaCharsets[schema]; cs != "" {
		return cs
	}
	if c.serverCharset != "" {
		return c.serverCharset
	}
	return DefaultCharset
}

// hasSchemaCharset reports whether schema's charset was recorded.
func (c *Catalog) hasSchemaCharset(schema string) bool {
	_, ok := c.schemaCharsets[schema]
	return ok
}

// SameShape reports whether two definitions have the same columns (names,
// order and types) and the same row key, i.e. whether rows captured under one
// read the same under the other. Index and default-charset changes that leave
// both alone do not count.
func SameShape(a, b *Table) bool {
	if a == nil || b == nil {
		return a == b
	}
	if len(a.Columns) != len(b.Columns) || a.KeyKind != b.KeyKind || !slices.Equal(a.Key, b.Key) {
		return false
	}
	for i := range a.Columns {
		x, y := a.Columns[i], b.Columns[i]
		if x.Name != y.Name || x.Type != y.Type || x.Unsigned != y.Unsigned || x.Length != y.Length ||
			x.Precision != y.Precision || x.Scale != y.Scale || x.FSP != y.FSP ||
			x.Charset != y.Charset || x.Nullable != y.Nullable || !slices.Equal(x.Elems, y.Elems) ||
			x.Generated != y.Generated {
			return false
		}
	}
	if len(a.Derived) != len(b.Derived) {
		return false
	}
	for i := range a.Derived {
		if !strings.EqualFold(a.Derived[i].Name, b.Derived[i].Name) || a.Derived[i].Generated != b.Derived[i].Generated {
			return false
		}
	}
	return true
}
