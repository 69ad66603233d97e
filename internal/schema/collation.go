package schema

import (
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// ColumnCollations returns the collation each column of createTable (one
// CREATE TABLE statement, as SHOW CREATE TABLE prints it) declares: its
// own COLLATE, else the table's COLLATE= (DEFAULT COLLATE), lower case;
// which columns hold text is the caller's to tell (a number is given the
// table's too). A column under its own charset's default collation, or in
// a table that names none, is absent from the map. CaseInsensitive tells
// what a collation means for a comparison.
func ColumnCollations(createTable string) (map[string]string, error) {
	// The prepass rewrites what the parser does not know (MariaDB's UUID,
	// INET6…) as ApplyDDL does.
	p := prepare(createTable)
	if p.unsupported != "" {
		return nil, fmt.Errorf("schema: parse CREATE TABLE: %s is not supported", p.unsupported)
	}
	stmt, err := parseOne(p.sql)
	if err != nil && p.retry != "" {
		if n2, err2 := parseOne(p.retry); err2 == nil {
			stmt, err = n2, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("schema: parse CREATE TABLE: %w", err)
	}
	ct, ok := stmt.(*ast.CreateTableStmt)
	if !ok {
		return nil, fmt.Errorf("schema: not a CREATE TABLE statement: %.60s", createTable)
	}
	tableCollation, tableCharset := "", ""
	for _, o := range ct.Options {
		switch o.Tp {
		case ast.TableOptionCollate:
			tableCollation = strings.ToLower(o.StrValue)
		case ast.TableOptionCharset:
			tableCharset = NormalizeCharset(o.StrValue)
		}
	}
	out := map[string]string{}
	for _, def := range ct.Cols {
		co := strings.ToLower(def.Tp.GetCollate())
		for _, o := range def.Options {
			if o.Tp == ast.ColumnOptionCollate {
				co = strings.ToLower(o.StrValue)
			}
		}
		cs := NormalizeCharset(def.Tp.GetCharset())
		switch {
		case co != "":
		case cs != "" && cs != tableCharset:
			// Its own charset, under that charset's default collation.
		case tableCollation != "":
			co = tableCollation
		}
		if co != "" {
			out[def.Name.Name.O] = co
		}
	}
	return out, nil
}

// CaseInsensitive reports whether text under collation compares case
// blind: a _ci collation, or "" (a charset's default collation, _ci for
// every MySQL and MariaDB charset but binary, which a caller rules out by
// the column's charset). _bin, _cs and binary are case sensitive.
func CaseInsensitive(collation string) bool {
	c := strings.ToLower(collation)
	return c == "" || strings.HasSuffix(c, "_ci")
}

// AccentInsensitive reports whether a case-insensitive collation also
// ignores accents: MySQL 8's _ai_ci, and the older _general_ci and
// _unicode_ci families ('é' = 'e'); _as_ci is accent sensitive.
func AccentInsensitive(collation string) bool {
	c := strings.ToLower(collation)
	return CaseInsensitive(c) && !strings.Contains(c, "_as_")
}
