package schema

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// createTable applies CREATE [OR REPLACE] TABLE [IF NOT EXISTS] ... [LIKE].
func (a *applier) createTable(n *ast.CreateTableStmt) (Change, error) {
	if n.TemporaryKeyword != ast.TemporaryNone {
		return Change{Kind: ChangeNone}, nil
	}
	k, err := a.key(n.Table)
	if err != nil {
		return Change{}, err
	}
	old, exists := a.get(k)
	if exists && n.IfNotExists && !a.p.orReplace {
		return Change{Kind: ChangeNone}, nil
	}
	if n.Select != nil {
		return Change{}, &UnparsedDDLError{Stmt: a.stmt, Reason: "CREATE TABLE ... SELECT: the columns come from the query"}
	}
	ch := Change{Kind: ChangeCreate}
	var t *Table
	if n.ReferTable != nil {
		src, err := a.key(n.ReferTable)
		if err != nil {
			return Change{}, err
		}
		def, ok := a.get(src)
		if !ok {
			ch.Unknown = append(ch.Unknown, src.String())
			if exists { // the stale definition must go: the new one is unknown
				a.stage(k, nil)
				ch.Tables = append(ch.Tables, TableChange{Schema: k.schema, Name: k.name, Old: old})
			}
			return ch, nil
		}
		t = def.Clone()
		t.Schema, t.Name = k.schema, k.name
	} else {
		t = &Table{Schema: k.schema, Name: k.name, Charset: a.cat.SchemaCharset(k.schema)}
		if cs := optionsCharset(n.Options, ""); cs != "" {
			t.Charset = cs
		}
		var keys []Index
		for _, def := range n.Cols {
			col, inline, err := columnFromDef(def, t.Charset)
			if err != nil {
				return Change{}, a.fail(k, "%v", err)
			}
			if t.ColumnIndex(col.Name) >= 0 {
				return Change{}, a.fail(k, "duplicate column %q", col.Name)
			}
			t.Columns = append(t.Columns, col)
			keys = append(keys, inlineIndexes(col.Name, inline)...)
		}
		for _, c := range n.Constraints {
			if ix, ok := constraintIndex(c); ok {
				keys = append(keys, ix)
			}
		}
		for _, ix := range keys {
			if err := addIndex(t, ix, false); err != nil {
				return Change{}, a.fail(k, "%v", err)
			}
		}
		ChooseKey(t)
	}
	tc := TableChange{Schema: k.schema, Name: k.name, New: t}
	if exists {
		tc.Old = old
	}
	a.stage(k, t)
	ch.Tables = append(ch.Tables, tc)
	return ch, nil
}

// inlineIndexes returns the indexes a column's own PRIMARY KEY / UNIQUE
// declares.
func inlineIndexes(col string, k inlineKeys) []Index {
	var out []Index
	if k.primary {
		out = append(out, Index{Columns: []string{col}, Primary: true})
	}
	if k.unique {
		out = append(out, Index{Columns: []string{col}, Unique: true})
	}
	return out
}

// constraintIndex converts a table constraint to an index; it reports false
// for constraints that are not indexes (CHECK, FOREIGN KEY).
func constraintIndex(c *ast.Constraint) (Index, bool) {
	ix := Index{Name: c.Name}
	switch c.Tp {
	case ast.ConstraintPrimaryKey:
		ix.Primary, ix.Unique = true, true
	case ast.ConstraintUniq, ast.ConstraintUniqKey, ast.ConstraintUniqIndex:
		ix.Unique = true
	case ast.ConstraintKey, ast.ConstraintIndex, ast.ConstraintFulltext, ast.ConstraintVector, ast.ConstraintColumnar:
	default:
		return Index{}, false
	}
	ix.Columns, ix.Partial = indexParts(c.Keys)
	return ix, true
}

// indexParts returns the columns of index parts and whether a part is a
// prefix or an expression.
func indexParts(parts []*ast.IndexPartSpecification) ([]string, bool) {
	var cols []string
	partial := false
	for _, p := range parts {
		if p.Expr != nil || p.Column == nil {
			partial = true
			continue
		}
		if p.Length > 0 {
			partial = true
		}
		cols = append(cols, p.Column.Name.O)
	}
	return cols, partial
}

// optionsCharset returns the charset table options set (CHARSET, or the
// charset of COLLATE), "" when none; def is what CHARSET DEFAULT means.
func optionsCharset(opts []*ast.TableOption, def string) string {
	cs, co := "", ""
	for _, o := range opts {
		switch o.Tp {
		case ast.TableOptionCharset:
			cs = NormalizeCharset(o.StrValue)
			if o.Default || cs == "" {
				cs = def
			}
		case ast.TableOptionCollate:
			co = CharsetOfCollation(o.StrValue)
		}
	}
	if cs == "" {
		cs = co
	}
	return cs
}

// dropTable applies DROP TABLE [IF EXISTS] a, b, ...; views and temporary
// tables are ignored.
func (a *applier) dropTable(n *ast.DropTableStmt) (Change, error) {
	if n.IsView || n.TemporaryKeyword != ast.TemporaryNone {
		return Change{Kind: ChangeNone}, nil
	}
	ch := Change{Kind: ChangeDrop}
	for _, tn := range n.Tables {
		k, err := a.key(tn)
		if err != nil {
			return Change{}, err
		}
		old, ok := a.get(k)
		if !ok {
			ch.Unknown = append(ch.Unknown, k.String())
			continue
		}
		a.stage(k, nil)
		ch.Tables = append(ch.Tables, TableChange{Schema: k.schema, Name: k.name, Old: old})
	}
	return ch, nil
}

// truncate applies TRUNCATE [TABLE] t.
func (a *applier) truncate(n *ast.TruncateTableStmt) (Change, error) {
	k, err := a.key(n.Table)
	if err != nil {
		return Change{}, err
	}
	ch := Change{Kind: ChangeTruncate}
	if t, ok := a.get(k); ok {
		ch.Tables = []TableChange{{Schema: k.schema, Name: k.name, Old: t, New: t}}
	} else {
		ch.Unknown = []string{k.String()}
	}
	return ch, nil
}

// slot is where a table renamed by RENAME TABLE came from.
type slot struct {
	t      *Table // nil when the catalog did not know the table
	origin tableKey
}

// rename applies RENAME TABLE a TO b, c TO d, ... in order (so swaps through
// a temporary name work) and reports the net renames.
func (a *applier) rename(n *ast.RenameTableStmt) (Change, error) {
	work := map[tableKey]*slot{}
	var touched []tableKey
	ch := Change{Kind: ChangeRename}
	for _, p := range n.TableToTables {
		from, err := a.key(p.OldTable)
		if err != nil {
			return Change{}, err
		}
		to, err := a.key(p.NewTable)
		if err != nil {
			return Change{}, err
		}
		s, seen := work[from]
		if !seen {
			if t, ok := a.get(from); ok {
				s = &slot{t: t, origin: from}
			}
		}
		if s == nil {
			ch.Unknown = append(ch.Unknown, from.String())
			s = &slot{origin: from}
		}
		if _, ok := work[from]; !ok {
			touched = append(touched, from)
		}
		if _, ok := work[to]; !ok {
			touched = append(touched, to)
		}
		work[from], work[to] = nil, s
	}
	for _, k := range touched {
		s := work[k]
		switch {
		case s == nil || s.t == nil:
			if _, ok := a.get(k); ok {
				a.stage(k, nil)
			}
		case s.origin == k:
		default:
			t := s.t.Clone()
			t.Schema, t.Name = k.schema, k.name
			a.stage(k, t)
			ch.Tables = append(ch.Tables, TableChange{Schema: k.schema, Name: k.name,
				OldSchema: s.origin.schema, OldName: s.origin.name, Old: s.t, New: t})
		}
	}
	return ch, nil
}

// createIndex applies CREATE [OR REPLACE] [UNIQUE|FULLTEXT|SPATIAL] INDEX.
func (a *applier) createIndex(n *ast.CreateIndexStmt) (Change, error) {
	ix := Index{Name: n.IndexName, Unique: n.KeyType == ast.IndexKeyTypeUnique}
	ix.Columns, ix.Partial = indexParts(n.IndexPartSpecifications)
	return a.onTable(n.Table, func(t *Table) error {
		if a.p.orReplace {
			dropIndex(t, ix.Name)
		}
		return addIndex(t, ix, n.IfNotExists || a.p.lenient)
	})
}

// dropIndex applies DROP INDEX [IF EXISTS] i ON t. Dropping an index the
// catalog does not hold is not an error: a definition taken from a table map
// knows only the primary key.
func (a *applier) dropIndex(n *ast.DropIndexStmt) (Change, error) {
	return a.onTable(n.Table, func(t *Table) error {
		dropIndex(t, n.IndexName)
		return nil
	})
}

// onTable applies edit to a copy of the named table and reports the result
// as an alter (or no change when the definition is unchanged).
func (a *applier) onTable(tn *ast.TableName, edit func(*Table) error) (Change, error) {
	k, err := a.key(tn)
	if err != nil {
		return Change{}, err
	}
	old, ok := a.get(k)
	if !ok {
		return Change{Kind: ChangeAlter, Unknown: []string{k.String()}}, nil
	}
	t := old.Clone()
	if err := edit(t); err != nil {
		return Change{}, a.fail(k, "%v", err)
	}
	ChooseKey(t)
	if sameDefinition(old, t) {
		return Change{Kind: ChangeNone}, nil
	}
	a.stage(k, t)
	return Change{Kind: ChangeAlter, Tables: []TableChange{{Schema: k.schema, Name: k.name, Old: old, New: t}}}, nil
}

// sameDefinition reports whether two definitions are identical in every
// field dbtrail keeps.
func sameDefinition(a, b *Table) bool {
	if !SameShape(a, b) || a.Schema != b.Schema || a.Name != b.Name || a.Charset != b.Charset || len(a.Indexes) != len(b.Indexes) {
		return false
	}
	for i := range a.Indexes {
		x, y := a.Indexes[i], b.Indexes[i]
		if x.Name != y.Name || x.Primary != y.Primary || x.Unique != y.Unique || x.Partial != y.Partial ||
			strings.Join(x.Columns, "\x00") != strings.Join(y.Columns, "\x00") {
			return false
		}
	}
	return true
}
