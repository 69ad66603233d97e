package schema

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

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
