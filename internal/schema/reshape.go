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
	// form a table file stores (types.Cell.Text); nil with From "" is NULL.
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

// parse parses the statement and walks its clauses.
func (pl *planner) parse() error {
	if implicitRowEnd(pl.old) != "" {
		return pl.redump("a system-versioned table keeps history rows the fold does not hold")
	}
	p := prepare(pl.stmt)
	switch p.kind {
	case stmtAlterTable, stmtCreateIndex, stmtDropIndex:
	default:
		return pl.redump("not an ALTER TABLE, CREATE INDEX or DROP INDEX statement")
	}
	if p.unsupported != "" {
		return pl.redump("%s is not supported", p.unsupported)
	}
	toks := tokenize(pl.stmt)
	if ignoresRows(toks) {
		return pl.redump("ALTER IGNORE deletes the rows a new unique key would duplicate")
	}
	for _, t := range toks {
		if t.kind == tkString && strings.Contains(t.text, `\`) {
			pl.backslash = true
		}
	}
	pl.lenient = p.lenient
	node, err := parseOne(p.sql)
	if err != nil && p.retry != "" {
		if n2, err2 := parseOne(p.retry); err2 == nil {
			node, err, pl.cutExprs = n2, nil, true
			if engine := retryEngine(p); engine != "" && !keepsRows(engine) {
				return pl.redump("ENGINE=%s may not keep the table's rows", engine)
			}
		}
	}
	if err != nil {
		return pl.redump("cannot parse the statement: %v", err)
	}
	for _, c := range pl.old.Columns {
		pl.cols = append(pl.cols, entry{name: c.Name, from: len(pl.cols)})
	}
	switch n := node.(type) {
	case *ast.AlterTableStmt:
		if err := pl.sameTable(n.Table); err != nil {
			return err
		}
		for _, s := range n.Specs {
			if err := pl.spec(s); err != nil {
				return err
			}
		}
		return nil
	case *ast.CreateIndexStmt: // rows unchanged; a new key is checked by finish
		return pl.sameTable(n.Table)
	case *ast.DropIndexStmt:
		return pl.sameTable(n.Table)
	}
	return pl.redump("not an ALTER TABLE, CREATE INDEX or DROP INDEX statement")
}

// sameTable checks that the statement names the table planned for.
func (pl *planner) sameTable(tn *ast.TableName) error {
	if !strings.EqualFold(tn.Name.O, pl.old.Name) || (tn.Schema.O != "" && !strings.EqualFold(tn.Schema.O, pl.old.Schema)) {
		return pl.redump("the statement names table %s, not this one", strings.TrimPrefix(tn.Schema.O+"."+tn.Name.O, "."))
	}
	return nil
}

// ignoresRows reports whether the statement is ALTER [ONLINE] IGNORE TABLE.
func ignoresRows(toks []token) bool {
	var words []string
	for _, t := range toks {
		if t.kind == tkSpace || t.kind == tkComment {
			continue
		}
		if t.kind != tkWord || len(words) == 3 {
			break
		}
		words = append(words, strings.ToUpper(t.text))
	}
	if len(words) < 2 || words[0] != "ALTER" {
		return false
	}
	return words[1] == "IGNORE" || (len(words) > 2 && words[1] == "ONLINE" && words[2] == "IGNORE")
}

// retryEngine returns the ENGINE a statement's table options name, read
// from its tokens (the retry parse cuts table options), or "".
func retryEngine(p *prepared) string {
	depth := 0
	for i := range p.sig {
		switch {
		case p.is(i, "("):
			depth++
		case p.is(i, ")"):
			depth--
		case depth == 0 && p.word(i) == "ENGINE" && (p.is(i-1, ",") || p.tok(i-1).kind != tkPunct):
			j := i + 1
			if p.is(j, "=") {
				j++
			}
			if t := p.tok(j); t.kind == tkWord || t.kind == tkIdent || t.kind == tkString {
				return unquoteIdent(t)
			}
		}
	}
	return ""
}

// keepsRows reports whether a storage engine keeps the rows of a table
// converted to it.
func keepsRows(engine string) bool {
	switch strings.ToLower(engine) {
	case "innodb", "myisam", "aria":
		return true
	}
	return false
}

// spec follows one ALTER TABLE clause.
func (pl *planner) spec(s *ast.AlterTableSpec) error {
	switch s.Tp {
	case ast.AlterTableOption:
		return pl.options(s.Options)
	case ast.AlterTableAddColumns:
		for _, def := range s.NewColumns {
			var pos *ast.ColumnPosition
			if len(s.NewColumns) == 1 {
				pos = s.Position
			}
			if err := pl.addColumn(def, pos, s.IfNotExists); err != nil {
				return err
			}
		}
	case ast.AlterTableDropColumn:
		return pl.dropColumn(s.OldColumnName.Name.O, s.IfExists)
	case ast.AlterTableModifyColumn, ast.AlterTableChangeColumn:
		from := s.NewColumns[0].Name.Name.O
		if s.Tp == ast.AlterTableChangeColumn {
			from = s.OldColumnName.Name.O
		}
		return pl.modifyColumn(from, s.NewColumns[0], s.Position, s.IfExists)
	case ast.AlterTableRenameColumn:
		from, to := s.OldColumnName.Name.O, s.NewColumnName.Name.O
		if i := pl.find(from); i >= 0 {
			pl.cols[i].name = to
		} else if !pl.old.IsDerived(from) {
			return pl.redump("column %s does not exist", from)
		}
	case ast.AlterTableAlterColumn:
		if name := s.NewColumns[0].Name.Name.O; pl.find(name) < 0 && !pl.old.IsDerived(name) {
			return pl.redump("column %s does not exist", name)
		}
	case ast.AlterTableAddConstraint, ast.AlterTableDropPrimaryKey, ast.AlterTableDropIndex,
		ast.AlterTableDropForeignKey, ast.AlterTableDropCheck, ast.AlterTableAlterCheck,
		ast.AlterTableRenameIndex, ast.AlterTableIndexInvisible, ast.AlterTableLock,
		ast.AlterTableAlgorithm, ast.AlterTableForce, ast.AlterTableEnableKeys,
		ast.AlterTableDisableKeys, ast.AlterTableOrderByColumns, ast.AlterTableRenameTable:
		// rows unchanged; a key these change is checked against the definitions
	case ast.AlterTableAddPartitions, ast.AlterTableCoalescePartitions, ast.AlterTableDropPartition,
		ast.AlterTableTruncatePartition, ast.AlterTablePartition, ast.AlterTableRemovePartitioning,
		ast.AlterTableRebuildPartition, ast.AlterTableReorganizePartition, ast.AlterTableExchangePartition,
		ast.AlterTableImportPartitionTablespace, ast.AlterTableDiscardPartitionTablespace,
		ast.AlterTableImportTablespace, ast.AlterTableDiscardTablespace, ast.AlterTableDropFirstPartition,
		ast.AlterTableAddLastPartition, ast.AlterTableReorganizeLastPartition, ast.AlterTableReorganizeFirstPartition,
		ast.AlterTableCheckPartitions, ast.AlterTableOptimizePartition, ast.AlterTableRepairPartition,
		ast.AlterTablePartitionAttributes, ast.AlterTablePartitionOptions:
		return pl.redump("a partition or tablespace operation")
	default:
		return pl.redump("an ALTER TABLE clause the fold does not know (type %d)", s.Tp)
	}
	return nil
}

// options follows table options: an engine that drops rows and CONVERT TO
// CHARACTER SET over character columns cannot be proved.
func (pl *planner) options(opts []*ast.TableOption) error {
	for _, o := range opts {
		switch o.Tp {
		case ast.TableOptionEngine:
			if o.StrValue != "" && !keepsRows(o.StrValue) {
				return pl.redump("ENGINE=%s may not keep the table's rows", o.StrValue)
			}
		case ast.TableOptionCharset, ast.TableOptionCollate:
			if o.UintValue != ast.TableOptionCharsetWithConvertTo {
				continue
			}
			for _, c := range pl.old.Columns {
				if isCharType(c.Type) {
					return pl.redump("CONVERT TO CHARACTER SET converts the values of column %s", c.Name)
				}
			}
		}
	}
	return nil
}

// find returns the position in pl.cols of the named column, or -1.
func (pl *planner) find(name string) int {
	for i, e := range pl.cols {
		if strings.EqualFold(e.name, name) {
			return i
		}
	}
	return -1
}

// addColumn follows ADD COLUMN def [FIRST | AFTER c].
func (pl *planner) addColumn(def *ast.ColumnDef, pos *ast.ColumnPosition, ifNotExists bool) error {
	name := def.Name.Name.O
	if pl.find(name) >= 0 || pl.old.IsDerived(name) {
		if ifNotExists || pl.lenient {
			return nil
		}
		return pl.redump("column %s already exists", name)
	}
	switch generatedKind(def) {
	case GeneratedVirtual:
		return nil // not stored; positions around it are checked by finish
	case GeneratedStored:
		return pl.redump("column %s is a new STORED generated column", name)
	}
	return pl.place(entry{name: name, from: -1, def: def}, -1, pos)
}

// dropColumn follows DROP COLUMN name.
func (pl *planner) dropColumn(name string, ifExists bool) error {
	i := pl.find(name)
	if i < 0 {
		if ifExists || pl.lenient || pl.old.IsDerived(name) {
			return nil
		}
		return pl.redump("column %s does not exist", name)
	}
	if pl.old.KeyKind != KeyRow && containsFold(pl.old.Key, name) {
		return pl.redump("column %s is part of the table's key (%s)", name, strings.Join(pl.old.Key, ", "))
	}
	pl.cols = append(pl.cols[:i:i], pl.cols[i+1:]...)
	return nil
}

// modifyColumn follows MODIFY / CHANGE [COLUMN] from def [FIRST | AFTER c].
// Whether the new type keeps the values is decided by finish.
func (pl *planner) modifyColumn(from string, def *ast.ColumnDef, pos *ast.ColumnPosition, ifExists bool) error {
	to := def.Name.Name.O
	i := pl.find(from)
	if i < 0 {
		switch {
		case pl.old.IsDerived(from) && generatedKind(def) != "":
			return nil // a generated column stays one: not stored
		case pl.old.IsDerived(from):
			return pl.redump("generated column %s becomes a stored column", from)
		case ifExists || pl.lenient:
			return nil
		}
		return pl.redump("column %s does not exist", from)
	}
	if generatedKind(def) != "" {
		return pl.redump("column %s becomes a generated column", from)
	}
	if pl.cols[i].from < 0 {
		return pl.redump("column %s is redefined by the statement that adds it", from)
	}
	e := pl.cols[i]
	e.name = to
	return pl.place(e, i, pos)
}

// place puts e at position at (replacing the entry there) or, when at < 0,
// at the end; pos (FIRST / AFTER c) moves it.
func (pl *planner) place(e entry, at int, pos *ast.ColumnPosition) error {
	if at >= 0 {
		pl.cols = append(pl.cols[:at:at], pl.cols[at+1:]...)
	} else {
		at = len(pl.cols)
	}
	if pos != nil {
		switch pos.Tp {
		case ast.ColumnPositionFirst:
			at = 0
		case ast.ColumnPositionAfter:
			after := pos.RelativeColumn.Name.O
			j := pl.find(after)
			if j < 0 {
				return pl.redump("column %s is placed after %s, which is not a stored column", e.name, after)
			}
			at = j + 1
		}
	}
	pl.cols = append(pl.cols[:at:at], append([]entry{e}, pl.cols[at:]...)...)
	return nil
}

// generatedKind returns GeneratedStored or GeneratedVirtual for a generated
// column definition, "" otherwise.
func generatedKind(def *ast.ColumnDef) string {
	for _, o := range def.Options {
		if o.Tp == ast.ColumnOptionGenerated {
			if o.Stored {
				return GeneratedStored
			}
			return GeneratedVirtual
		}
	}
	return ""
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
