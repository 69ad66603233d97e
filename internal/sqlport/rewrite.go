package sqlport

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/dbtrail/dbtrail/internal/views"
)

// rewriteEnv is what the rewrites of a read need of its session.
type rewriteEnv struct {
	// db is the session's database (USE, COM_INIT_DB, the DSN's): an
	// unqualified table name is a table of it.
	db     string
	tables []views.TableRef
	// table is a table's stored definition and collations at the
	// session's moment (catalog.table), read when a rewrite needs it.
	table func(schemaName, table string) (*tableInfo, error)
	funcs *funcEnv
	// lookup, when not nil, is the SELECT to read in place of the view
	// of table schema.table for a statement reading it by key alone
	// (vals: the key's columns, views.Session.BaseLookup).
	lookup func(name string, vals map[string]string) (string, bool)
}

// edit replaces text[start:end] with s.
type edit struct {
	start, end int
	s          string
}

// rewrite is the second step of a read's translation (after translate):
// MySQL's functions (rewriteFuncs), then, from DuckDB's parse of the
// result, each unqualified table name qualified with the session's
// database, each information_schema table replaced by the port's MySQL
// shaped one (infoschema.go), each value written for a call or variable
// alone in a select list named by the call as written (NOW(), as MySQL
// names it), and each text column compared under a
// case-insensitive collation given DuckDB's NOCASE (and NOACCENT) collation.
// Statements DuckDB's serializer does not take run as they are.
func rewrite(ctx context.Context, text string, env *rewriteEnv) (string, error) {
	var named []namedValue
	text, err := rewriteText(text, env.funcs, &named)
	if err != nil {
		return "", err
	}
	text = havingAsWhere(text)
	t, ok, err := parseTree(ctx, text)
	if err != nil || !ok {
		return text, err
	}
	var edits []edit
	for _, n := range named {
		for _, l := range t.selected {
			if l >= n.pos && l < n.pos+n.len {
				edits = append(edits, edit{n.pos + n.len, n.pos + n.len, " AS " + views.QuoteIdent(n.name)})
				break
			}
		}
	}
	resolved := map[int]*views.TableRef{} // tableRef index → its view
	for i, r := range t.tables {
		e, ref, err := env.tableEdit(text, t, r)
		if err != nil {
			return "", err
		}
		if ref != nil && t.point != nil && env.lookup != nil {
			if q, ok := env.lookup(ref.Schema+"."+ref.Table, t.point.vals); ok {
				e = pointEdit(text, r, q)
			}
		}
		if e != nil {
			edits = append(edits, *e)
		}
		if ref != nil {
			resolved[i] = ref
		}
	}
	if err := wideDecimals(t, resolved, env.table); err != nil {
		return "", err
	}
	if len(t.compared) > 0 && len(resolved) > 0 {
		padded := map[int]bool{} // literals and parameters trimmed
		params := paramLocs(text)
		words := operandText(text)
		for _, c := range t.compared {
			co, pad, err := collationOf(c, t, resolved, env.table)
			if err != nil {
				return "", err
			}
			_, end, ok := nameAt(text, c.loc)
			if !ok {
				continue
			}
			if co != "" {
				co = " COLLATE " + co
			}
			if pad && c.pad {
				// PAD SPACE: trailing spaces do not count, on either side.
				edits = append(edits, edit{c.loc, c.loc, "rtrim("}, edit{end, end, ", ' ')" + co})
				for _, l := range c.lits {
					if e, ok := trimmedLiteral(text, l); ok && !padded[l] {
						padded[l] = true
						edits = append(edits, e)
					}
				}
				for _, n := range c.params {
					if n <= len(params) && !padded[params[n-1]] {
						l := params[n-1]
						padded[l] = true
						edits = append(edits, edit{l, l + 1, "rtrim(?, ' ')"})
					}
				}
				es, err := paddedExprs(words, c, padded)
				if err != nil {
					return "", err
				}
				edits = append(edits, es...)
			} else if co != "" {
				edits = append(edits, edit{end, end, co})
			}
		}
	}
	if len(resolved) > 0 {
		es, err := guardedDates(text, t, resolved, env.table)
		if err != nil {
			return "", err
		}
		edits = append(edits, es...)
	}
	if loc := env.funcs.loc; loc != nil && loc != time.UTC && len(resolved) > 0 {
		es, err := zonedTimestamps(text, t, resolved, env.table, loc)
		if err != nil {
			return "", err
		}
		edits = append(edits, es...)
	}
	return applyEdits(text, edits), nil
}

// tableEdit is the edit of table reference r (nil: none) and the view it
// reads (nil: none of the views).
func (env *rewriteEnv) tableEdit(text string, t *tree, r fromRef) (*edit, *views.TableRef, error) {
	if r.catalog != "" || r.loc < 0 {
		return nil, nil, nil
	}
	schemaName := r.schema
	if schemaName == "" {
		if t.ctes[strings.ToLower(r.name)] {
			return nil, nil, nil
		}
		schemaName = env.db
	}
	parts, end, ok := nameAt(text, r.loc)
	if !ok || !strings.EqualFold(parts[len(parts)-1], r.name) {
		if strings.EqualFold(schemaName, infoSchema) {
			return nil, nil, fmt.Errorf("sql port: cannot place information_schema.%s in the statement", r.name)
		}
		return nil, nil, nil
	}
	if strings.EqualFold(schemaName, infoSchema) {
		q, err := env.infoSchemaTable(r.name)
		if err != nil {
			return nil, nil, err
		}
		if r.alias == "" {
			q += " AS " + views.QuoteIdent(r.name)
		}
		return &edit{r.loc, end, q}, nil, nil
	}
	if r.schema == "" && strings.EqualFold(r.name, "dual") && !env.hasTable(schemaName, r.name) {
		// MySQL's one-row table of FROM DUAL.
		q := "(SELECT 1 AS dummy)"
		if r.alias == "" {
			q += " AS " + views.QuoteIdent(r.name)
		}
		return &edit{r.loc, end, q}, nil, nil
	}
	if schemaName == "" {
		return nil, nil, mysql.NewError(mysql.ER_NO_DB_ERROR, fmt.Sprintf("No database selected: name the table %s as db.%s, or USE db first", r.name, r.name))
	}
	for i, v := range env.tables {
		if v.Schema == schemaName && v.Table == r.name {
			if r.schema != "" {
				return nil, &env.tables[i], nil
			}
			return &edit{r.loc, end, views.QuoteIdent(schemaName) + "." + views.QuoteIdent(r.name)}, &env.tables[i], nil
		}
	}
	return nil, nil, mysql.NewError(mysql.ER_NO_SUCH_TABLE, fmt.Sprintf("Table '%s.%s' doesn't exist", schemaName, r.name))
}

// pointEdit is the edit reading table reference r of a point statement
// from q, a SELECT of its rows (env.lookup's): q as a subquery with r's
// alias, or its name.
func pointEdit(text string, r fromRef, q string) *edit {
	_, end, _ := nameAt(text, r.loc)
	q = "(" + q + ")"
	if r.alias == "" {
		q += " AS " + views.QuoteIdent(r.name)
	}
	return &edit{r.loc, end, q}
}

// hasTable reports whether schema.table is one of the session's views.
func (env *rewriteEnv) hasTable(schemaName, table string) bool {
	for _, v := range env.tables {
		if v.Schema == schemaName && v.Table == table {
			return true
		}
	}
	return false
}

// collationOf is the DuckDB collation the compared column c needs, or ""
// when it is not a case-insensitive text column of the statement's tables
// (or the name is ambiguous), and whether it is a text column under a
// PAD SPACE collation.
func collationOf(c columnRef, t *tree, resolved map[int]*views.TableRef, lookup func(string, string) (*tableInfo, error)) (string, bool, error) {
	found, pad, seen := "", false, false
	for _, ref := range candidates(c.names, t, resolved) {
		info, err := lookup(ref.Schema, ref.Table)
		if err != nil {
			return "", false, err
		}
		if col := c.names[len(c.names)-1]; info.collations[col] == unknownCollation {
			return "", false, mysql.NewError(mysql.ER_NOT_SUPPORTED_YET, fmt.Sprintf(
				"the dbtrail SQL port does not know the collation of %s.%s.%s, a text column a schema change after snapshot %s added or redefined: "+
					"its comparisons are refused until a snapshot holds the table's CREATE TABLE (the next refresh)", ref.Schema, ref.Table, col, info.key.snapshot))
		}
		co, p := info.nocase(*ref, c.names[len(c.names)-1])
		if seen && (found != co || pad != p) {
			return "", false, nil // two tables' columns of the name: not told which
		}
		found, pad, seen = co, p, true
	}
	return found, pad, nil
}

// candidates are the statement's tables (resolved: their views) that may
// hold the column named names (column, table.column or
// schema.table.column, as written): those with a column of the name whose
// qualifier, if any, names them.
func candidates(names []string, t *tree, resolved map[int]*views.TableRef) []*views.TableRef {
	if len(names) == 0 {
		return nil
	}
	var out []*views.TableRef
	col := names[len(names)-1]
	for i, ref := range resolved {
		r := t.tables[i]
		switch len(names) {
		case 2:
			q := names[0]
			if !strings.EqualFold(q, r.alias) && !(r.alias == "" && q == ref.Table) {
				continue
			}
		case 3:
			if names[0] != ref.Schema || names[1] != ref.Table {
				continue
			}
		}
		if hasColumn(*ref, col) {
			out = append(out, ref)
		}
	}
	return out
}

// trimmedLiteral is the edit that drops the trailing spaces of the string
// literal at byte loc of text (DuckDB's form: quoted with ', a quote in it
// doubled), or false when there is none to drop or no such literal there.
func trimmedLiteral(text string, loc int) (edit, bool) {
	if loc >= len(text) || text[loc] != '\'' {
		return edit{}, false
	}
	i := quotedEnd(text, loc, '\'') - 1 // the closing quote
	if i <= loc || text[i] != '\'' {
		return edit{}, false
	}
	body := text[loc+1 : i]
	trimmed := strings.TrimRight(body, " ")
	if trimmed == body {
		return edit{}, false
	}
	return edit{loc + 1 + len(trimmed), i, ""}, true
}

func hasColumn(ref views.TableRef, col string) bool {
	for _, c := range ref.Columns {
		if c == col {
			return true
		}
	}
	return false
}

// applyEdits applies non-overlapping edits to text, from its end: at the
// same start a replacement before an insertion (so the insertion lands in
// front of it), a repeated edit once.
func applyEdits(text string, edits []edit) string {
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].start != edits[j].start {
			return edits[i].start > edits[j].start
		}
		return edits[i].end > edits[j].end
	})
	for i, e := range edits {
		if i > 0 && e == edits[i-1] {
			continue
		}
		text = text[:e.start] + e.s + text[e.end:]
	}
	return text
}

// paramLocs are the byte locations of the parameters (?) of DuckDB SQL
// text, in order: a ? outside a string, a quoted identifier and a
// comment (mask).
func paramLocs(text string) []int {
	var out []int
	for i, c := range []byte(mask(text)) {
		if c == '?' {
			out = append(out, i)
		}
	}
	return out
}

// paddedExprs are the edits that compare the expressions c (a text
// column under a PAD SPACE collation) is compared with without their
// trailing spaces, as MySQL does: rtrim(expr, ' '); padded marks the ones
// done; m is the statement's operandText. A subquery, or an expression
// whose end is not found, is error 1235: the port would compare its
// trailing spaces.
func paddedExprs(m string, c columnRef, padded map[int]bool) ([]edit, error) {
	refuse := func() error {
		return mysql.NewError(mysql.ER_NOT_SUPPORTED_YET, fmt.Sprintf(
			"the dbtrail SQL port does not translate the comparison of the text column %s (a PAD SPACE collation: trailing spaces do not count) "+
				"with a subquery or an expression it cannot delimit: wrap it in RTRIM()", strings.Join(c.names, ".")))
	}
	if c.odd {
		return nil, refuse()
	}
	var out []edit
	for _, r := range c.exprs {
		if padded[r[0]] {
			continue
		}
		start, end, ok := exprSpan(m, r[0], r[1])
		if !ok {
			return nil, refuse()
		}
		padded[r[0]] = true
		out = append(out, edit{start, start, "rtrim("}, edit{end, end, ", ' ')"})
	}
	return out, nil
}

// exprSpan is the span, in m (a statement's operandText), of the
// comparison operand whose parse holds the byte locations first to last:
// from first to its end (exprEnd); when
// last is beyond that end the operand began earlier, at a parenthesis or
// a call whose name has no location (coalesce(…)), and the start moves
// back over them. False when no such span holds last.
func exprSpan(m string, first, last int) (int, int, bool) {
	start := first
	for range 8 {
		end, ok := exprEnd(m, start)
		if ok && last < end {
			return start, end, true
		}
		i := start
		for i > 0 && m[i-1] == ' ' {
			i--
		}
		if i == 0 || m[i-1] != '(' {
			return 0, 0, false
		}
		i--
		for i > 0 && isWord(m[i-1]) {
			i--
		}
		start = i
	}
	return 0, 0, false
}

// operandText is DuckDB SQL text masked (mask) and upper-cased: what
// exprSpan, exprEnd and itemSpan scan, made once per statement.
func operandText(text string) string {
	return strings.ToUpper(mask(text))
}

// exprEnd is the byte just after the comparison operand that begins at
// byte at of m (operandText): where, outside parentheses and CASE … END, a comma, a
// closing parenthesis, a comparison, a word that ends an operand (AND, OR,
// THEN, FROM, ORDER…) or the text's end comes; false when there is
// nothing before it.
func exprEnd(m string, at int) (int, bool) {
	depth, end := 0, len(m)
scan:
	for i := at; i < len(m); i++ {
		switch ch := m[i]; {
		case ch == '(':
			depth++
		case ch == ')' && depth == 0, ch == ',' && depth == 0, ch == ';' && depth == 0:
			end = i
			break scan
		case ch == ')':
			depth--
		case depth == 0 && strings.ContainsRune("=<>!", rune(ch)):
			end = i
			break scan
		case isWordStart(ch) && (i == 0 || !isWord(m[i-1]) && m[i-1] != '.'):
			w := wordAt(m, i)
			switch {
			case w == "CASE":
				depth++
			case w == "END" && depth > 0:
				depth--
			case depth == 0 && operandEnds[w]:
				end = i
				break scan
			}
			i += len(w) - 1
		}
	}
	end = len(strings.TrimRight(m[:end], " \t\r\n")) // a comment before it is blank in m
	return end, end > at
}

// operandEnds are the words that end a comparison's operand.
var operandEnds = map[string]bool{"AND": true, "OR": true, "NOT": true, "IS": true, "IN": true, "LIKE": true, "ILIKE": true,
	"BETWEEN": true, "THEN": true, "WHEN": true, "ELSE": true, "END": true, "FROM": true, "WHERE": true, "GROUP": true,
	"HAVING": true, "ORDER": true, "LIMIT": true, "OFFSET": true, "UNION": true, "EXCEPT": true, "INTERSECT": true,
	"WINDOW": true, "QUALIFY": true, "ASC": true, "DESC": true, "AS": true, "COLLATE": true, "ESCAPE": true, "USING": true,
	"JOIN": true, "ON": true, "LEFT": true, "RIGHT": true, "INNER": true, "OUTER": true, "CROSS": true, "FULL": true,
	"NATURAL": true, "LATERAL": true, "SEMI": true, "ANTI": true, "POSITIONAL": true, "ASOF": true}

// wordAt is the word that begins at byte i of m.
func wordAt(m string, i int) string {
	j := i
	for j < len(m) && isWord(m[j]) {
		j++
	}
	return m[i:j]
}
