package sqlport

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/views"
)

// catalog is what the port knows of a snapshot's tables beyond the views'
// columns: each table's stored definition (key, indexes, charset) and its
// text columns' collations, read from the snapshot's manifest and, when a
// table is first asked for, its table file's footer (the manifest's CREATE
// TABLE over the footer's). A session at a moment after the snapshot reads
// its base snapshot's catalog: a collation or key changed after it is not
// seen.
type catalog struct {
	snapshot string
	dir      string
	manifest snapshot.Manifest
	tables   map[[2]string]*tableInfo
}

// tableInfo is one table of a catalog.
type tableInfo struct {
	def        *schema.Table     // nil when the footer has none
	collations map[string]string // column → declared collation (schema.ColumnCollations)
}

// loadCatalog reads the manifest of snapshot id of the source folder.
func loadCatalog(sourceDir, id string) (*catalog, error) {
	dir := snapshot.Folder(sourceDir).Snapshot(id)
	b, err := os.ReadFile(filepath.Join(dir, snapshot.ManifestName))
	if err != nil {
		return nil, fmt.Errorf("catalog of snapshot %s: %w", id, err)
	}
	m, err := snapshot.ParseManifest(b)
	if err != nil {
		return nil, fmt.Errorf("catalog of snapshot %s: %w", id, err)
	}
	return &catalog{snapshot: id, dir: dir, manifest: m, tables: map[[2]string]*tableInfo{}}, nil
}

// table is schema.table's info (empty for a table the snapshot does not
// hold: one the tail created after it), its footer read once.
func (c *catalog) table(schemaName, table string) (*tableInfo, error) {
	key := [2]string{schemaName, table}
	if t, ok := c.tables[key]; ok {
		return t, nil
	}
	ti := &tableInfo{collations: map[string]string{}}
	if mt, ok := c.manifest.Table(schemaName, table); ok {
		meta, err := snapshot.ReadFooter(filepath.Join(c.dir, filepath.FromSlash(mt.File)))
		if err != nil {
			return nil, fmt.Errorf("catalog of snapshot %s: %w", c.snapshot, err)
		}
		create := meta.CreateTable
		if mt.CreateTable != "" {
			create = mt.CreateTable
		}
		ti.def = meta.Table
		if create != "" {
			if ti.collations, err = schema.ColumnCollations(create); err != nil {
				return nil, fmt.Errorf("catalog of snapshot %s: table %s.%s: %w", c.snapshot, schemaName, table, err)
			}
		}
	}
	if c.tables == nil {
		c.tables = map[[2]string]*tableInfo{}
	}
	c.tables[key] = ti
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
// (binary, _bin, _cs, not text).
func (t *tableInfo) nocase(ref views.TableRef, col string) string {
	for i, c := range ref.Columns {
		if c != col || i >= len(ref.Defs) || !isText(ref.Defs[i]) {
			continue
		}
		co := t.collations[col]
		switch {
		case !schema.CaseInsensitive(co):
			return ""
		case schema.AccentInsensitive(co):
			return "NOCASE.NOACCENT"
		}
		return "NOCASE"
	}
	return ""
}
