package schema

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

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
