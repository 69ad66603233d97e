package sqlport

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/charset"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/views"
)

// catalog is what the rewrites know of the session's tables beyond the
// views' columns: each table's stored definition at the session's moment
// (storedDef: key, indexes, charset) and its text columns' collations
// from its CREATE TABLE, read when a rewrite first needs the table and
// kept while its definition's key (snapshot, tail shape) holds.
type catalog struct {
	sourceDir string
	tables    map[string]*tableInfo // by schema.table
}

// tableInfo is one table of a catalog.
type tableInfo struct {
	key        defKey
	def        *schema.Table     // nil when the footer has none
	collations map[string]string // column → declared collation (schema.ColumnCollations)
}

// table is schema.table's info at session s's moment (empty for a table
// that is not one of its views).
func (c *catalog) table(s *views.Session, schemaName, table string) (*tableInfo, error) {
	name := schemaName + "." + table
	key := defKeyOf(s, name)
	if t := c.tables[name]; t != nil && t.key == key {
		return t, nil
	}
	ti := &tableInfo{key: key, collations: map[string]string{}}
	if _, ok := tableRef(s, schemaName, table); ok {
		def, _, co, err := storedDef(c.sourceDir, schemaName, table, key)
		if err != nil {
			return nil, err
		}
		ti.def = def
		if co != nil {
			ti.collations = co
		}
	}
	if c.tables == nil {
		c.tables = map[string]*tableInfo{}
	}
	c.tables[name] = ti
	return ti, nil
}

// isText reports whether a column definition holds text compared under a
// collation (not binary strings, numbers or times).
func isText(d schema.Column) bool {
	switch d.Type {
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set":
		return d.Charset != "binary"
	}
	return false
}

// nocase is the DuckDB collation that compares column col of t as its
// MySQL collation does, or "" when a plain comparison already does
// (binary, _bin, _cs, not text); pad tells that the collation is PAD
// SPACE (padSpace).
func (t *tableInfo) nocase(ref views.TableRef, col string) (co string, pad bool) {
	for i, c := range ref.Columns {
		if c != col || i >= len(ref.Defs) || !isText(ref.Defs[i]) {
			continue
		}
		declared := t.collations[col]
		pad = padSpace(declared)
		switch {
		case !schema.CaseInsensitive(declared):
			return "", pad
		case schema.AccentInsensitive(declared):
			return "NOCASE.NOACCENT", pad
		}
		return "NOCASE", pad
	}
	return "", false
}

// padSpace reports whether a text collation compares as if the shorter
// string were padded with spaces ('a' = 'a  '): every MariaDB collation
// but the _nopad_ ones (a charset's default, "", included), not MySQL 8's
// _0900_ ones (NO PAD, as the TiDB parser's table says).
func padSpace(collation string) bool {
	c := strings.ToLower(collation)
	if strings.Contains(c, "nopad") {
		return false
	}
	if co, err := charset.GetCollationByName(c); err == nil && co.PadAttribute != "" {
		return co.PadAttribute == charset.PadSpace
	}
	return true
}
