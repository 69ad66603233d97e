package schema

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// alterState collects what the specs of one ALTER TABLE did besides editing
// the definition.
type alterState struct {
	renameTo     *tableKey
	dataReplaced bool       // partitions dropped/truncated/exchanged, tablespace imported
	partners     []tableKey // other tables whose rows changed (EXCHANGE PARTITION)
}

// alterTable applies ALTER TABLE with any number of specs, in order.
func (a *applier) alterTable(n *ast.AlterTableStmt) (Change, error) {
	k, err := a.key(n.Table)
	if err != nil {
		return Change{}, err
	}
	old, ok := a.get(k)
	if !ok {
		return Change{Kind: ChangeAlter, Unknown: []string{k.String()}}, nil
	}
	t := old.Clone()
	var st alterState
	for _, spec := range n.Specs {
		if err := a.alterSpec(t, spec, &st); err != nil {
			return Change{}, a.fail(k, "%v", err)
		}
	}
	ChooseKey(t)
	tc := TableChange{Schema: k.schema, Name: k.name, Old: old, New: t}
	if st.renameTo != nil && *st.renameTo != k {
		tc.Schema, tc.Name, tc.OldSchema, tc.OldName = st.renameTo.schema, st.renameTo.name, k.schema, k.name
		t.Schema, t.Name = st.renameTo.schema, st.renameTo.name
		a.stage(k, nil)
	}
	ch := Change{Kind: ChangeAlter, Tables: []TableChange{tc}}
	switch {
	case st.dataReplaced:
		ch.Kind = ChangeTruncate
		for _, pk := range st.partners {
			if pt, ok := a.get(pk); ok {
				ch.Tables = append(ch.Tables, TableChange{Schema: pk.schema, Name: pk.name, Old: pt, New: pt})
			} else {
				ch.Unknown = append(ch.Unknown, pk.String())
			}
		}
	case tc.OldName != "" && SameShape(old, t):
		ch.Kind = ChangeRename
	case tc.OldName == "" && sameDefinition(old, t):
		return Change{Kind: ChangeNone}, nil
	}
	a.stage(tableKey{t.Schema, t.Name}, t)
	return ch, nil
}

// alterSpec applies one ALTER TABLE spec to t.
func (a *applier) alterSpec(t *Table, s *ast.AlterTableSpec, st *alterState) error {
	lenient := a.p.lenient
	switch s.Tp {
	case ast.AlterTableOption:
		return a.alterOptions(t, s.Options)
	case ast.AlterTableAddColumns:
		for i, def := range s.NewColumns {
			if t.ColumnIndex(def.Name.Name.O) >= 0 {
				if s.IfNotExists || lenient {
					continue
				}
				return fmt.Errorf("column %q already exists", def.Name.Name.O)
			}
			var pos *ast.ColumnPosition
			if i == 0 && len(s.NewColumns) == 1 {
				pos = s.Position
			}
			if err := a.placeColumn(t, def, -1, pos); err != nil {
				return err
			}
		}
		for _, c := range s.NewConstraints {
			if ix, ok := constraintIndex(c); ok {
				if err := addIndex(t, ix, lenient); err != nil {
					return err
				}
			}
		}
	case ast.AlterTableAddConstraint:
		if ix, ok := constraintIndex(s.Constraint); ok {
			return addIndex(t, ix, s.Constraint.IfNotExists || lenient)
		}
	case ast.AlterTableDropColumn:
		name := s.OldColumnName.Name.O
		i := t.ColumnIndex(name)
		if i < 0 {
			return missing(s.IfExists || lenient, "column %q does not exist", name)
		}
		t.Columns = append(t.Columns[:i:i], t.Columns[i+1:]...)
		dropColumnFromIndexes(t, name)
	case ast.AlterTableDropPrimaryKey:
		if !dropIndex(t, primaryName) {
			return missing(lenient, "table has no primary key")
		}
	case ast.AlterTableDropIndex, ast.AlterTableDropCheck:
		name := s.Name
		if name == "" && s.Constraint != nil {
			name = s.Constraint.Name
		}
		dropIndex(t, name) // unknown: a CHECK, or not known to a table-map definition
	case ast.AlterTableModifyColumn, ast.AlterTableChangeColumn:
		from := s.NewColumns[0].Name.Name.O
		if s.Tp == ast.AlterTableChangeColumn {
			from = s.OldColumnName.Name.O
		}
		i := t.ColumnIndex(from)
		if i < 0 {
			return missing(s.IfExists || lenient, "column %q does not exist", from)
		}
		to := s.NewColumns[0].Name.Name.O
		if j := t.ColumnIndex(to); j >= 0 && j != i {
			return fmt.Errorf("column %q already exists", to)
		}
		return a.placeColumn(t, s.NewColumns[0], i, s.Position)
	case ast.AlterTableRenameColumn:
		from, to := s.OldColumnName.Name.O, s.NewColumnName.Name.O
		i := t.ColumnIndex(from)
		if i < 0 {
			return fmt.Errorf("column %q does not exist", from)
		}
		if j := t.ColumnIndex(to); j >= 0 && j != i {
			return fmt.Errorf("column %q already exists", to)
		}
		t.Columns[i].Name = to
		renameColumnInIndexes(t, from, to)
	case ast.AlterTableAlterColumn:
		if name := s.NewColumns[0].Name.Name.O; t.ColumnIndex(name) < 0 {
			return missing(lenient, "column %q does not exist", name)
		}
	case ast.AlterTableRenameIndex:
		if i := indexPosition(t, s.FromKey.O); i >= 0 {
			t.Indexes[i].Name = s.ToKey.O
		}
	case ast.AlterTableRenameTable:
		k, err := a.key(s.NewTable)
		if err != nil {
			return err
		}
		st.renameTo = &k
	case ast.AlterTableDropPartition, ast.AlterTableTruncatePartition, ast.AlterTableImportTablespace,
		ast.AlterTableImportPartitionTablespace, ast.AlterTableDropFirstPartition:
		st.dataReplaced = true
	case ast.AlterTableExchangePartition:
		st.dataReplaced = true
		if k, err := a.key(s.NewTable); err == nil {
			st.partners = append(st.partners, k)
		}
	}
	return nil
}

// missing is the error for an object a spec names that t does not have,
// or nil when the spec tolerates that (IF EXISTS).
func missing(tolerated bool, format string, args ...any) error {
	if tolerated {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// placeColumn puts the column def into t: at position at (replacing the
// column there) when at >= 0, else at the end; pos (FIRST / AFTER c) moves
// it. Indexes follow a rename, and the column's own PRIMARY KEY / UNIQUE
// are added.
func (a *applier) placeColumn(t *Table, def *ast.ColumnDef, at int, pos *ast.ColumnPosition) error {
	cs := t.Charset
	if cs == "" {
		cs = a.cat.SchemaCharset(t.Schema)
	}
	col, inline, err := columnFromDef(def, cs)
	if err != nil {
		return err
	}
	if at >= 0 {
		if old := t.Columns[at].Name; old != col.Name {
			renameColumnInIndexes(t, old, col.Name)
		}
		t.Columns[at] = col
	} else {
		at = appendPosition(t)
		t.Columns = append(t.Columns[:at:at], append([]Column{col}, t.Columns[at:]...)...)
	}
	if pos != nil && pos.Tp != ast.ColumnPositionNone {
		rest := append(append([]Column{}, t.Columns[:at]...), t.Columns[at+1:]...)
		to := 0
		if pos.Tp == ast.ColumnPositionAfter {
			after := pos.RelativeColumn.Name.O
			j := (&Table{Columns: rest}).ColumnIndex(after)
			if j < 0 {
				return fmt.Errorf("column %q (AFTER) does not exist", after)
			}
			to = j + 1
		}
		t.Columns = append(rest[:to:to], append([]Column{col}, rest[to:]...)...)
	}
	for _, ix := range inlineIndexes(col.Name, inline) {
		if err := addIndex(t, ix, false); err != nil {
			return err
		}
	}
	return nil
}

// appendPosition is where ADD COLUMN without FIRST/AFTER puts a column: at
// the end, but before the hidden row_start/row_end columns that a table
// WITH SYSTEM VERSIONING keeps last.
func appendPosition(t *Table) int {
	if implicitRowEnd(t) != "" {
		return len(t.Columns) - 2
	}
	return len(t.Columns)
}

// alterOptions applies table options: a new default charset, or CONVERT TO
// CHARACTER SET, which also converts every character column.
func (a *applier) alterOptions(t *Table, opts []*ast.TableOption) error {
	cs := optionsCharset(opts, a.cat.SchemaCharset(t.Schema))
	if cs == "" {
		return nil
	}
	for _, o := range opts {
		if o.Tp == ast.TableOptionCharset && o.UintValue == ast.TableOptionCharsetWithConvertTo {
			for i := range t.Columns {
				convertCharset(&t.Columns[i], cs)
			}
		}
	}
	t.Charset = cs
	return nil
}
