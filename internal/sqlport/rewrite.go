package sqlport

import (
	"context"
	"fmt"
	"sort"
	"strings"

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
		if e != nil {
			edits = append(edits, *e)
		}
		if ref != nil {
			resolved[i] = ref
		}
	}
	if len(t.compared) > 0 && len(resolved) > 0 {
		padded := map[int]bool{} // literals trimmed
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
			} else if co != "" {
				edits = append(edits, edit{end, end, co})
			}
		}
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
	if len(c.names) == 0 {
		return "", false, nil
	}
	found, pad, seen := "", false, false
	col := c.names[len(c.names)-1]
	for i, ref := range resolved {
		r := t.tables[i]
		switch len(c.names) {
		case 2:
			q := c.names[0]
			if !strings.EqualFold(q, r.alias) && !(r.alias == "" && q == ref.Table) {
				continue
			}
		case 3:
			if c.names[0] != ref.Schema || c.names[1] != ref.Table {
				continue
			}
		}
		if !hasColumn(*ref, col) {
			continue
		}
		info, err := lookup(ref.Schema, ref.Table)
		if err != nil {
			return "", false, err
		}
		co, p := info.nocase(*ref, col)
		if seen && (found != co || pad != p) {
			return "", false, nil // two tables' columns of the name: not told which
		}
		found, pad, seen = co, p, true
	}
	return found, pad, nil
}

// trimmedLiteral is the edit that drops the trailing spaces of the string
// literal at byte loc of text (DuckDB's form: quoted with ', a quote in it
// doubled), or false when there is none to drop or no such literal there.
func trimmedLiteral(text string, loc int) (edit, bool) {
	if loc >= len(text) || text[loc] != '\'' {
		return edit{}, false
	}
	i := loc + 1
	for i < len(text) {
		if text[i] == '\'' {
			if i+1 < len(text) && text[i+1] == '\'' {
				i += 2
				continue
			}
			break
		}
		i++
	}
	if i >= len(text) {
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

// applyEdits applies non-overlapping edits to text.
func applyEdits(text string, edits []edit) string {
	sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
	for _, e := range edits {
		text = text[:e.start] + e.s + text[e.end:]
	}
	return text
}
