package schema

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Reshape is how the stored rows of one shape of a table become the rows of
// the next shape after a schema change the fold can prove: each column of the
// new stored definition takes one old stored column's value unchanged (kept,
// moved, renamed, widened) or one constant for every existing row (added).
// See docs/schema-changes.md.
type Reshape struct {
	Columns []ColumnSource `json:"columns"`
	// OldColumns are the old stored definition's column names in order: the
	// columns of the table file a reshape reads.
	OldColumns []string `json:"old_columns"`
	// KeyChanged is set when the rows are identified by another key after
	// the change (a primary or unique key added or dropped, ...): the same
	// rows, keyed differently.
	KeyChanged bool `json:"key_changed,omitempty"`
}

// ColumnSource is where one new stored column's values come from.
type ColumnSource struct {
	Name string `json:"name"`           // the new stored column's name
	From string `json:"from,omitempty"` // the old stored column's name; "" for an added column
	// Value is an added column's value in every existing row, in the text
	// form a table file stores (rowimage.Cell.Text); nil with From "" is NULL.
	Value *string `json:"value,omitempty"`
	// Retyped is set for a kept column whose definition changed without
	// changing its values (a widening, NOT NULL → NULL): the values stay,
	// the table file's column type may not.
	Retyped bool `json:"retyped,omitempty"`
}

// RedumpError says why the fold cannot prove a schema change's effect on
// existing rows, so the table must be dumped again.
type RedumpError struct{ Table, Stmt, Reason string }

func (e *RedumpError) Error() string {
	return fmt.Sprintf("table %s must be dumped again after %q: %s", e.Table, abbreviate(e.Stmt, 200), e.Reason)
}

// SameRows reports whether r keeps every old column as it is, in order,
// with no added column (a metadata-only change: indexes, comments, options,
// defaults of future rows): a table file of the old definition is one of the
// new. The key may still have changed (KeyChanged).
func (r Reshape) SameRows() bool {
	if len(r.Columns) != len(r.OldColumns) {
		return false
	}
	for i, c := range r.Columns {
		if c.From == "" || c.From != r.OldColumns[i] || c.Name != c.From || c.Retyped {
			return false
		}
	}
	return true
}

// PlanReshape decides how the rows of old become rows of new after stmt, the
// statement (ALTER TABLE, CREATE INDEX, DROP INDEX) that turned old into new
// (both are stored definitions: Table.Stored). It parses stmt (the same TiDB
// parser ApplyDDL uses) and returns *RedumpError when it cannot prove every value.
//
// The statement's clauses say where every column comes from; the two
// definitions then decide whether each value survives: a kept column's type
// must hold every old value unchanged (the same type, or a widening of
// docs/schema-changes.md) and an added column's default must be a constant
// whose stored form is known for its type.
func PlanReshape(old, new *Table, stmt string) (Reshape, error) {
	pl := &planner{old: old, new: new, stmt: stmt}
	if err := pl.parse(); err != nil {
		return Reshape{}, err
	}
	return pl.finish()
}

// entry is one column of the table as the statement's clauses leave it.
type entry struct {
	name string
	from int            // position in old.Columns; -1 for a column the statement adds
	def  *ast.ColumnDef // the added column's definition
}

// planner follows one statement's clauses over the columns of old.
type planner struct {
	old, new *Table
	stmt     string
	cols     []entry
	// cutExprs: the statement parsed only with its column expressions (and
	// odd table options) cut, so added columns' defaults are unknown.
	cutExprs bool
	// backslash: a string literal of the statement holds a backslash, whose
	// meaning depends on the session's NO_BACKSLASH_ESCAPES.
	backslash bool
	// lenient: the pre-pass removed an IF [NOT] EXISTS the parser rejects,
	// so a clause on a missing (or existing) column is tolerated, as
	// ApplyDDL tolerates it.
	lenient bool
}

func (pl *planner) redump(format string, args ...any) error {
	name := pl.old.QualifiedName()
	return &RedumpError{Table: name, Stmt: pl.stmt, Reason: fmt.Sprintf(format, args...)}
}

// finish checks the columns the clauses left against the new definition and
// decides every column's values.
func (pl *planner) finish() (Reshape, error) {
	names := make([]string, len(pl.cols))
	for i, e := range pl.cols {
		names[i] = e.name
	}
	if !equalFoldAll(names, pl.new.ColumnNames()) {
		return Reshape{}, pl.redump("the statement leaves columns (%s), the new definition has (%s)",
			strings.Join(names, ", "), strings.Join(pl.new.ColumnNames(), ", "))
	}
	r := Reshape{Columns: make([]ColumnSource, len(pl.cols)), OldColumns: pl.old.ColumnNames(),
		KeyChanged: pl.old.KeyKind != pl.new.KeyKind || !equalFoldAll(pl.old.Key, pl.new.Key)}
	for i, e := range pl.cols {
		nc := pl.new.Columns[i]
		if e.from >= 0 {
			oc := pl.old.Columns[e.from]
			if reason := keepsValues(oc, nc); reason != "" {
				return Reshape{}, pl.redump("column %s: %s", nc.Name, reason)
			}
			r.Columns[i] = ColumnSource{Name: nc.Name, From: oc.Name, Retyped: !sameColumnType(oc, nc)}
			continue
		}
		v, err := pl.addedValue(e.def, nc)
		if err != nil {
			return Reshape{}, err
		}
		r.Columns[i] = ColumnSource{Name: nc.Name, Value: v}
	}
	return r, nil
}

// equalFoldAll reports whether a and b hold the same names in order,
// compared case-insensitively.
func equalFoldAll(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}
