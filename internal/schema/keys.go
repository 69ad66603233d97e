package schema

import (
	"fmt"
	"slices"
	"strings"
)

// primaryName is the name MariaDB and MySQL give every primary key.
const primaryName = "PRIMARY"

// ChooseKey sets t.Key and t.KeyKind from t.Indexes by the KeyKind rules:
// the primary key; else the first unique index, in index order, whose
// columns are all NOT NULL and none a prefix or an expression; else every
// column (KeyRow). Primary key columns are made NOT NULL, as the server
// makes them whatever their definition says.
func ChooseKey(t *Table) {
	for _, ix := range t.Indexes {
		if ix.Primary && len(ix.Columns) > 0 {
			for _, c := range ix.Columns {
				if i := t.ColumnIndex(c); i >= 0 {
					t.Columns[i].Nullable = false
				}
			}
			t.KeyKind, t.Key = KeyPrimary, append([]string(nil), ix.Columns...)
			return
		}
	}
	for _, ix := range t.Indexes {
		if !ix.Unique || ix.Partial || len(ix.Columns) == 0 {
			continue
		}
		usable := true
		for _, name := range ix.Columns {
			if i := t.ColumnIndex(name); i < 0 || t.Columns[i].Nullable {
				usable = false
				break
			}
		}
		if usable {
			t.KeyKind, t.Key = KeyUnique, append([]string(nil), ix.Columns...)
			return
		}
	}
	t.KeyKind, t.Key = KeyRow, t.ColumnNames()
}

// indexPosition returns the position of the index named name
// (case-insensitive, as index names compare) or -1.
func indexPosition(t *Table, name string) int {
	for i, ix := range t.Indexes {
		if strings.EqualFold(ix.Name, name) {
			return i
		}
	}
	return -1
}

// autoIndexName is the name the server gives an unnamed index: its first
// column's name, with _2, _3, ... appended while that name is taken.
func autoIndexName(t *Table, first string) string {
	if first == "" {
		first = "expr"
	}
	name := first
	for n := 2; indexPosition(t, name) >= 0 || strings.EqualFold(name, primaryName); n++ {
		name = fmt.Sprintf("%s_%d", first, n)
	}
	return name
}

// addIndex adds ix to t: a primary key goes first and makes its columns NOT
// NULL, as the server does; any other index goes last. Its column names are
// spelled as t's columns are. An unnamed index is named as the server would.
// When an index of that name (or a second primary key) exists, addIndex
// returns an error unless ifNotExists, in which case it does nothing.
func addIndex(t *Table, ix Index, ifNotExists bool) error {
	for i, c := range ix.Columns {
		j := t.ColumnIndex(c)
		if j < 0 {
			return fmt.Errorf("key column %q is not a column of %s", c, t.QualifiedName())
		}
		ix.Columns[i] = t.Columns[j].Name
	}
	if ix.Primary {
		ix.Name = primaryName
		ix.Unique = true
	}
	if end := implicitRowEnd(t); ix.Unique && end != "" && !slices.Contains(ix.Columns, end) {
		ix.Columns = append(ix.Columns, end) // the server makes every unique key end with it
	}
	if !ix.Primary && ix.Name == "" {
		first := ""
		if len(ix.Columns) > 0 {
			first = ix.Columns[0]
		}
		ix.Name = autoIndexName(t, first)
	}
	if indexPosition(t, ix.Name) >= 0 {
		if ifNotExists {
			return nil
		}
		if ix.Primary {
			return fmt.Errorf("table %s already has a primary key", t.QualifiedName())
		}
		return fmt.Errorf("table %s already has an index named %q", t.QualifiedName(), ix.Name)
	}
	if !ix.Primary {
		t.Indexes = append(t.Indexes, ix)
		return nil
	}
	for _, c := range ix.Columns {
		t.Columns[t.ColumnIndex(c)].Nullable = false
	}
	t.Indexes = append([]Index{ix}, t.Indexes...)
	return nil
}

// implicitRowEnd returns the name of the row end column when t ends with the
// hidden row_start and row_end columns of a table WITH SYSTEM VERSIONING (as
// a table map or LoadFromServer shows them: same type, timestamp or bigint,
// NOT NULL), else "".
func implicitRowEnd(t *Table) string {
	n := len(t.Columns)
	if n < 3 {
		return ""
	}
	s, e := t.Columns[n-2], t.Columns[n-1]
	if strings.EqualFold(s.Name, "row_start") && strings.EqualFold(e.Name, "row_end") && s.Type == e.Type &&
		!s.Nullable && !e.Nullable && (s.Type == "timestamp" || s.Type == "bigint") {
		return e.Name
	}
	return ""
}

// dropIndex removes the index named name (PRIMARY for the primary key) and
// reports whether there was one.
func dropIndex(t *Table, name string) bool {
	i := indexPosition(t, name)
	if i < 0 {
		return false
	}
	t.Indexes = append(t.Indexes[:i:i], t.Indexes[i+1:]...)
	return true
}

// dropColumnFromIndexes removes a dropped column from every index and drops
// the indexes left without columns, as the server does.
func dropColumnFromIndexes(t *Table, col string) {
	kept := t.Indexes[:0:0]
	for _, ix := range t.Indexes {
		cols := ix.Columns[:0:0]
		removed := false
		for _, c := range ix.Columns {
			if strings.EqualFold(c, col) {
				removed = true
				continue
			}
			cols = append(cols, c)
		}
		ix.Columns = cols
		if removed && len(cols) == 0 {
			continue
		}
		kept = append(kept, ix)
	}
	t.Indexes = kept
}

// renameColumnInIndexes follows a column rename in every index.
func renameColumnInIndexes(t *Table, from, to string) {
	for i := range t.Indexes {
		for j, c := range t.Indexes[i].Columns {
			if strings.EqualFold(c, from) {
				t.Indexes[i].Columns[j] = to
			}
		}
	}
}
