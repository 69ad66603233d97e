package schema

import (
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// RenamePair is one table a statement renamed, in the statement's order:
// FromSchema.From became ToSchema.To. A schema is "" when the statement
// left the name unqualified (the event's default database).
type RenamePair struct {
	FromSchema, From string
	ToSchema, To     string
}

// RenamePairs returns the renames of a RENAME TABLE statement (every pair,
// in order: they apply one after the other, so `a TO t, b TO a, t TO b`
// swaps a and b) or of an ALTER TABLE ... RENAME [TO] (one pair). Any other
// statement has none. An error means the statement could not be parsed.
func RenamePairs(stmt string) ([]RenamePair, error) {
	p := prepare(stmt)
	if p.kind != stmtRenameTable && p.kind != stmtAlterTable {
		return nil, nil
	}
	node, err := parseOne(p.sql)
	if err != nil && p.retry != "" {
		if n2, err2 := parseOne(p.retry); err2 == nil {
			node, err = n2, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", abbreviate(stmt, 80), err)
	}
	var out []RenamePair
	switch n := node.(type) {
	case *ast.RenameTableStmt:
		for _, t := range n.TableToTables {
			out = append(out, RenamePair{FromSchema: t.OldTable.Schema.O, From: t.OldTable.Name.O,
				ToSchema: t.NewTable.Schema.O, To: t.NewTable.Name.O})
		}
	case *ast.AlterTableStmt:
		for _, s := range n.Specs {
			if s.Tp == ast.AlterTableRenameTable && s.NewTable != nil {
				out = append(out, RenamePair{FromSchema: n.Table.Schema.O, From: n.Table.Name.O,
					ToSchema: s.NewTable.Schema.O, To: s.NewTable.Name.O})
			}
		}
	}
	return out, nil
}
