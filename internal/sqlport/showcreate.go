package sqlport

import (
	"context"
	"regexp"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/views"
)

// showCreate matches SHOW CREATE TABLE [db.]table.
var showCreate = regexp.MustCompile("(?is)^\\s*SHOW\\s+CREATE\\s+TABLE\\s+`?([^`;\\s.]+)`?(?:\\.`?([^`;\\s]+)`?)?\\s*;?\\s*$")

// protoStatement answers the statements of the stored definitions that
// classify does not know (SHOW CREATE TABLE); ok is false for any other.
func (h *handler) protoStatement(ctx context.Context, query string) (res *mysql.Result, ok bool, err error) {
	m := showCreate.FindStringSubmatch(query)
	if m == nil {
		return nil, false, nil
	}
	name := m[1]
	if m[2] != "" {
		name += "." + m[2]
	}
	res, err = h.showCreateTable(ctx, name)
	return res, true, err
}

// namedTable finds the table of name (schema.table, or table in the
// session's database) at the session's moment and its definition; a
// missing one is error 1146 (1046 without a database).
func (h *handler) namedTable(ctx context.Context, name string) (*views.Session, string, string, *tableDef, error) {
	schemaName, table, ok := strings.Cut(name, ".")
	if !ok {
		schemaName, table = h.db, name
	}
	if schemaName == "" {
		return nil, "", "", nil, errRefused(mysql.ER_NO_DB_ERROR, "No database selected")
	}
	s, err := h.session(ctx)
	if err != nil {
		return nil, "", "", nil, err
	}
	d, err := h.tableDef(ctx, s, schemaName, table)
	if err != nil {
		return nil, "", "", nil, err
	}
	if d == nil {
		return nil, "", "", nil, errRefused(mysql.ER_NO_SUCH_TABLE, "Table '%s.%s' doesn't exist", schemaName, table)
	}
	return s, schemaName, table, d, nil
}

// showCreateTable is SHOW CREATE TABLE: the stored CREATE TABLE of the
// table at the session's moment (tableDef.create).
func (h *handler) showCreateTable(ctx context.Context, name string) (*mysql.Result, error) {
	_, _, table, d, err := h.namedTable(ctx, name)
	if err != nil {
		return nil, err
	}
	if d.create == "" {
		return nil, errRefused(mysql.ER_UNKNOWN_ERROR, "the backup holds no definition of table %s: its file has no dbtrail footer", name)
	}
	create := d.create
	return stringResult([]string{"Table", "Create Table"}, [][]*string{{&table, &create}}), nil
}

// showColumnsStored is SHOW COLUMNS / DESCRIBE: Field, Type, Null, Key,
// Default, Extra of the table's columns from its stored definition at the
// session's moment (defaults and AUTO_INCREMENT / ON UPDATE from its
// CREATE TABLE); a table without one shows its view's DuckDB types.
func (h *handler) showColumnsStored(ctx context.Context, name string) (*mysql.Result, error) {
	_, _, _, d, err := h.namedTable(ctx, name)
	if err != nil {
		return nil, err
	}
	extras := columnClauses(d.create)
	values := make([][]*string, len(d.cols))
	for i, col := range d.cols {
		name, null, key, extra := col, "YES", "", ""
		typ := mysqlTypeName(d.types[strings.ToLower(col)])
		var dflt *string
		if c, pk := d.column(col); c != nil {
			typ = snapshot.MySQLType(c)
			if !c.Nullable {
				null = "NO"
			}
			if key = keyOf(d.def, c.Name); pk {
				key = "PRI"
			}
			cl := extras[strings.ToLower(col)]
			dflt, extra = cl.dflt, cl.extra
		}
		values[i] = []*string{&name, &typ, &null, &key, dflt, &extra}
	}
	return stringResult([]string{"Field", "Type", "Null", "Key", "Default", "Extra"}, values), nil
}

// HandleFieldList is COM_FIELD_LIST: the fields of the table's columns
// (as a SELECT of them sends), those whose name matches wildcard (LIKE's
// % and _) when one is given.
func (h *handler) HandleFieldList(table, wildcard string) ([]*mysql.Field, error) {
	var fields []*mysql.Field
	_, err := h.run(func(ctx context.Context) (*mysql.Result, error) {
		_, schemaName, name, d, err := h.namedTable(ctx, table)
		if err != nil {
			return nil, err
		}
		var like *regexp.Regexp
		if wildcard != "" {
			like = likePattern(wildcard)
		}
		for _, col := range d.cols {
			if like != nil && !like.MatchString(col) {
				continue
			}
			f := &mysql.Field{Name: []byte(col), OrgName: []byte(col), Schema: []byte(schemaName), Table: []byte(name),
				OrgTable: []byte(name), Charset: charsetUTF8MB4, Type: mysql.MYSQL_TYPE_VAR_STRING, ColumnLength: 1 << 24}
			if c, pk := d.column(col); c != nil {
				f = fieldOfColumn(col, &source{schema: schemaName, table: name, col: c, pk: pk, def: d.def, collation: d.collations[c.Name]})
			}
			wire(f, h.results)
			f.DefaultValue = []byte{}
			fields = append(fields, f)
		}
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	return fields, nil
}

// likePattern is the regexp of a LIKE pattern (% any run, _ one
// character, \ escapes), case-insensitive.
func likePattern(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("(?is)^")
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		case '\\':
			if i+1 < len(p) {
				i++
				b.WriteString(regexp.QuoteMeta(p[i : i+1]))
			}
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// clause is what SHOW COLUMNS shows of a column's definition beyond its
// type: its default (nil: none, or NULL) and Extra.
type clause struct {
	dflt  *string
	extra string
}

// columnClauses reads the DEFAULT, AUTO_INCREMENT and ON UPDATE of each
// column definition of a CREATE TABLE as SHOW CREATE TABLE writes it (a
// column a line, starting with its backticked name), by lower-case column
// name. A line it cannot read gives no clause.
func columnClauses(create string) map[string]clause {
	out := map[string]clause{}
	for _, line := range strings.Split(create, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "`") {
			continue
		}
		end, err := identEnd(line, 0)
		if err != nil {
			continue
		}
		name := strings.ReplaceAll(line[1:end], "``", "`")
		toks := clauseTokens(strings.TrimSuffix(line[end+1:], ","))
		var cl clause
		for i := 0; i < len(toks); i++ {
			switch w := strings.ToUpper(toks[i]); {
			case w == "DEFAULT" && i+1 < len(toks):
				i++
				if v := toks[i]; !strings.EqualFold(v, "NULL") {
					v = unquoteDefault(v)
					cl.dflt = &v
				}
			case w == "AUTO_INCREMENT":
				cl.extra = "auto_increment"
			case w == "ON" && i+2 < len(toks) && strings.EqualFold(toks[i+1], "UPDATE"):
				cl.extra = strings.TrimSpace(cl.extra + " on update " + toks[i+2])
				i += 2
			}
		}
		out[strings.ToLower(name)] = cl
	}
	return out
}

// clauseTokens splits a column definition into words, quoted strings and
// parenthesised groups (a function call stays with its name).
func clauseTokens(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ' || c == '\t':
			i++
		case c == '\'' || c == '"' || c == '`':
			end, err := literalEnd(s, i)
			if err != nil {
				return out
			}
			out = append(out, s[i:end+1])
			i = end + 1
		default:
			j, depth := i, 0
			for ; j < len(s); j++ {
				if s[j] == '(' {
					depth++
				} else if s[j] == ')' {
					depth--
				} else if (s[j] == ' ' || s[j] == '\t') && depth <= 0 {
					break
				} else if (s[j] == '\'' || s[j] == '"') && depth > 0 {
					end, err := literalEnd(s, j)
					if err != nil {
						return out
					}
					j = end
				}
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	return out
}

// unquoteDefault is a DEFAULT's value as SHOW COLUMNS shows it: a quoted
// string's text, anything else as written.
func unquoteDefault(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return unescape(v[1:len(v)-1], '\'')
	}
	return v
}
