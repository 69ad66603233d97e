package schema

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// SystemSchemas returns the server's own schemas, which dbtrail never
// loads, captures or backs up: their changes are server bookkeeping.
func SystemSchemas() []string {
	return []string{"mysql", "information_schema", "performance_schema", "sys"}
}

// IsSystemSchema reports whether name is one of SystemSchemas (compared
// case-insensitively).
func IsSystemSchema(name string) bool {
	for _, s := range SystemSchemas() {
		if strings.EqualFold(s, name) {
			return true
		}
	}
	return false
}

// LoadFromServer reads the definitions of the base tables of schemas (all
// user schemas when empty; mysql, information_schema, performance_schema and
// sys never) from information_schema, with each schema's default charset
// and the server's. Views, sequences and temporary tables are left out;
// system-versioned tables are loaded with their hidden row_start/row_end
// columns, as the binlog shows them. It only reads.
//
// The catalog describes the server as it is now: it is right only for the
// binlog position current when it was read (a fresh start of capture), never
// for events logged before it.
func LoadFromServer(ctx context.Context, db *sql.DB, schemas []string) (*Catalog, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("load schema: %w", err)
	}
	defer conn.Close()
	cat := NewCatalog()
	var serverCS string
	if err := conn.QueryRowContext(ctx, "SELECT @@character_set_server").Scan(&serverCS); err != nil {
		return nil, fmt.Errorf("load schema: read @@character_set_server: %w", err)
	}
	cat.SetServerCharset(serverCS)
	where, args := schemaFilter("SCHEMA_NAME", schemas)
	if err := eachRow(ctx, conn, "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA WHERE "+where, args,
		func(r []sql.NullString) error { cat.SetSchemaCharset(r[0].String, r[1].String); return nil }); err != nil {
		return nil, err
	}
	where, args = schemaFilter("TABLE_SCHEMA", schemas)
	tables := map[tableKey]*Table{}
	var order, versioned []tableKey
	if err := eachRow(ctx, conn, "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_COLLATION, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED') AND "+where, args,
		func(r []sql.NullString) error {
			k := tableKey{r[0].String, r[1].String}
			tables[k] = &Table{Schema: k.schema, Name: k.name, Charset: CharsetOfCollation(r[2].String)}
			order = append(order, k)
			if r[3].String == "SYSTEM VERSIONED" {
				versioned = append(versioned, k)
			}
			return nil
		}); err != nil {
		return nil, err
	}
	if err := eachRow(ctx, conn, `SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE,
		CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, NUMERIC_SCALE, DATETIME_PRECISION, CHARACTER_SET_NAME, EXTRA
		FROM information_schema.COLUMNS WHERE `+where+` ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`, args,
		func(r []sql.NullString) error {
			t := tables[tableKey{r[0].String, r[1].String}]
			if t == nil {
				return nil // a view
			}
			col, err := columnFromInfoSchema(r[2:])
			if err != nil {
				return fmt.Errorf("load schema: table %s: %w", t.QualifiedName(), err)
			}
			t.Columns = append(t.Columns, col)
			return nil
		}); err != nil {
		return nil, err
	}
	// STATISTICS lists a table's indexes in the server's key order (PRIMARY,
	// then unique ones without NULL or prefix parts, ...); keep that order.
	if err := eachRow(ctx, conn, `SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, NON_UNIQUE, COLUMN_NAME, SUB_PART
		FROM information_schema.STATISTICS WHERE `+where, args,
		func(r []sql.NullString) error {
			t := tables[tableKey{r[0].String, r[1].String}]
			if t == nil {
				return nil
			}
			i := indexPosition(t, r[2].String)
			if i < 0 {
				t.Indexes = append(t.Indexes, Index{Name: r[2].String, Primary: r[2].String == primaryName, Unique: r[3].String == "0"})
				i = len(t.Indexes) - 1
			}
			ix := &t.Indexes[i]
			if !r[4].Valid || r[5].Valid {
				ix.Partial = true
			}
			if r[4].Valid {
				ix.Columns = append(ix.Columns, r[4].String)
			}
			return nil
		}); err != nil {
		return nil, err
	}
	markJSON(ctx, conn, where, args, tables)
	for _, k := range versioned {
		if err := addVersioning(ctx, conn, tables[k]); err != nil {
			return nil, err
		}
	}
	for _, k := range order {
		t := tables[k]
		ChooseKey(t)
		cat.Put(t)
	}
	return cat, nil
}

// schemaFilter returns a WHERE condition on a schema column: the given
// schemas, or every schema but the system ones.
func schemaFilter(col string, schemas []string) (string, []any) {
	list := schemas
	op := "IN"
	if len(schemas) == 0 {
		list, op = SystemSchemas(), "NOT IN"
	}
	args := make([]any, len(list))
	for i, s := range list {
		args[i] = s
	}
	return col + " " + op + " (" + strings.TrimSuffix(strings.Repeat("?,", len(list)), ",") + ")", args
}

// eachRow runs a query and calls fn with every row as nullable strings.
func eachRow(ctx context.Context, conn *sql.Conn, query string, args []any, fn func([]sql.NullString) error) error {
	rows, err := conn.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("load schema: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return fmt.Errorf("load schema: %w", err)
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("load schema: %w", err)
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load schema: %w", err)
	}
	return nil
}

// markJSON turns MariaDB's JSON columns, which information_schema shows as
// longtext with a CHECK (json_valid(col)) constraint, back into json, so a
// definition loaded here matches one parsed from the DDL. Servers without
// CHECK_CONSTRAINTS.LEVEL (MySQL) report json themselves; errors are ignored.
func markJSON(ctx context.Context, conn *sql.Conn, where string, args []any, tables map[tableKey]*Table) {
	where = strings.Replace(where, "TABLE_SCHEMA", "CONSTRAINT_SCHEMA", 1)
	_ = eachRow(ctx, conn, "SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS WHERE LEVEL = 'Column' AND "+where, args,
		func(r []sql.NullString) error {
			t := tables[tableKey{r[0].String, r[1].String}]
			if t == nil {
				return nil
			}
			if i := t.ColumnIndex(r[2].String); i >= 0 && t.Columns[i].Type == "longtext" &&
				strings.EqualFold(strings.ReplaceAll(r[3].String, " ", ""), "json_valid(`"+strings.ReplaceAll(t.Columns[i].Name, "`", "``")+"`)") {
				t.Columns[i].Type = "json"
			}
			return nil
		})
}

// addVersioning completes a system-versioned table as the binlog shows it:
// the implicit row_start and row_end columns, which information_schema
// hides, come last, and the row end column ends every unique key.
func addVersioning(ctx context.Context, conn *sql.Conn, t *Table) error {
	create, err := ShowCreateTable(ctx, conn, t.Schema, t.Name)
	if err != nil {
		return fmt.Errorf("load schema: %w", err)
	}
	end := versioningEnd(create)
	if end == "" {
		end = "row_end"
		t.Columns = append(t.Columns,
			Column{Name: "row_start", Type: "timestamp", FSP: 6}, Column{Name: end, Type: "timestamp", FSP: 6})
	}
	for i, ix := range t.Indexes {
		if ix.Unique && !slices.ContainsFunc(ix.Columns, func(c string) bool { return strings.EqualFold(c, end) }) {
			t.Indexes[i].Columns = append(ix.Columns, end)
		}
	}
	return nil
}

// RowQueryer is what ShowCreateTable reads through: a *sql.DB, *sql.Conn
// or *sql.Tx.
type RowQueryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ShowCreateTable returns the server's CREATE TABLE of schemaName.table.
func ShowCreateTable(ctx context.Context, q RowQueryer, schemaName, table string) (string, error) {
	quote := func(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
	var name, create string
	if err := q.QueryRowContext(ctx, "SHOW CREATE TABLE "+quote(schemaName)+"."+quote(table)).Scan(&name, &create); err != nil {
		return "", fmt.Errorf("SHOW CREATE TABLE %s.%s: %w", schemaName, table, err)
	}
	return create, nil
}

// versioningEnd returns the column a CREATE TABLE text declares GENERATED
// ALWAYS AS ROW END, or "" when the row end column is implicit.
func versioningEnd(create string) string {
	p := prepare(create)
	open := 0
	for open < len(p.sig) && !p.is(open, "(") {
		open++
	}
	for _, seg := range p.segments(open+1, p.closing(open)) {
		for i := seg[0]; i < seg[1]; i++ {
			if p.word(i) == "AS" && p.word(i+1) == "ROW" && p.word(i+2) == "END" {
				return unquoteIdent(p.tok(seg[0]))
			}
		}
	}
	return ""
}

// columnFromInfoSchema maps a COLUMNS row: COLUMN_NAME, DATA_TYPE,
// COLUMN_TYPE, IS_NULLABLE, CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION,
// NUMERIC_SCALE, DATETIME_PRECISION, CHARACTER_SET_NAME, EXTRA.
func columnFromInfoSchema(r []sql.NullString) (Column, error) {
	num := func(v sql.NullString) int { n, _ := strconv.Atoi(v.String); return n }
	colType := strings.ToLower(r[2].String)
	col := Column{
		Name:     r[0].String,
		Type:     strings.ToLower(r[1].String),
		Unsigned: strings.Contains(colType, " unsigned"),
		Nullable: r[3].String == "YES",
	}
	switch col.Type {
	case "char", "varchar", "binary", "varbinary":
		col.Length = num(r[4])
	case "bit":
		col.Length = num(r[5])
	case "decimal":
		col.Precision, col.Scale = num(r[5]), num(r[6])
	case "datetime", "timestamp", "time":
		col.FSP = num(r[7])
	case "enum", "set":
		elems, err := ParseEnumLabels(r[2].String)
		if err != nil {
			return Column{}, fmt.Errorf("column %q: %w", col.Name, err)
		}
		col.Elems = elems
	case "vector":
		col.Length = num(r[4])
	}
	if isCharType(col.Type) {
		col.Charset = NormalizeCharset(r[8].String)
	}
	if !strings.Contains("|decimal|float|double|tinyint|smallint|mediumint|int|bigint|", "|"+col.Type+"|") {
		col.Unsigned = false
	}
	if len(r) > 9 {
		col.Generated = generatedFromExtra(r[9].String)
	}
	return col, nil
}

var enumPrefix = regexp.MustCompile(`(?i)^\s*(enum|set)\s*\(`)

// ParseEnumLabels returns the labels of an ENUM or SET COLUMN_TYPE, in
// which quotes inside a label are doubled or backslash-escaped:
//
//	enum('a','it''s','back\\slash')  →  a, it's, back\slash
func ParseEnumLabels(columnType string) ([]string, error) {
	m := enumPrefix.FindStringIndex(columnType)
	if m == nil {
		return nil, fmt.Errorf("column type %q is not an enum or set", columnType)
	}
	var out []string
	toks := tokenize(columnType[m[1]:])
	expectLabel := true
	for _, t := range toks {
		switch {
		case t.kind == tkSpace:
		case t.kind == tkString && expectLabel:
			out = append(out, unquoteString(t.text))
			expectLabel = false
		case t.kind == tkPunct && t.text == "," && !expectLabel:
			expectLabel = true
		case t.kind == tkPunct && t.text == ")" && !expectLabel:
			return out, nil
		default:
			return nil, fmt.Errorf("column type %q: unexpected %q", columnType, t.text)
		}
	}
	return nil, fmt.Errorf("column type %q is not terminated", columnType)
}

// generatedFromExtra reads COLUMNS.EXTRA: MariaDB says "VIRTUAL GENERATED",
// "STORED GENERATED" (or "PERSISTENT GENERATED" before 10.2), MySQL
// "VIRTUAL GENERATED" or "STORED GENERATED".
func generatedFromExtra(extra string) string {
	e := strings.ToUpper(extra)
	switch {
	case !strings.Contains(e, "GENERATED"):
		return ""
	case strings.Contains(e, "VIRTUAL"):
		return GeneratedVirtual
	case strings.Contains(e, "STORED"), strings.Contains(e, "PERSISTENT"):
		return GeneratedStored
	}
	return ""
}
