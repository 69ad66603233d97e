package sqlport

import (
	"regexp"
	"strings"
)

// point is a statement that reads one table by equalities of its columns
// with integer literals: the statement's one SELECT (no subquery, CTE,
// join, table function or set operation), reading one table, and the
// `column = integer` conditions AND-ed at the top of its WHERE, by column
// name in lower case, each the literal's text. A table read through its
// base may then be read from the base alone when the changes up to the
// cut hold no row of that key (views.Session.BaseLookup).
type point struct {
	vals map[string]string
}

// pointShapes are the node types a point statement may not hold.
var pointShapes = map[string]bool{
	"JOIN": true, "SUBQUERY": true, "TABLE_FUNCTION": true, "SET_OPERATION_NODE": true, "RECURSIVE_CTE_NODE": true,
	"CTE_NODE": true, "PIVOT": true, "EXPRESSION_LIST": true, "EMPTY": true,
}

// integerTypes are the parse's types of an integer literal.
var integerTypes = map[string]bool{
	"TINYINT": true, "SMALLINT": true, "INTEGER": true, "BIGINT": true, "HUGEINT": true,
	"UTINYINT": true, "USMALLINT": true, "UINTEGER": true, "UBIGINT": true, "UHUGEINT": true,
}

// integerText is an integer literal's text at the start of a string.
var integerText = regexp.MustCompile(`^-?[0-9]+`)

// pointOf is stmt (one statement of DuckDB's parse of text) as a point
// statement, nil when it is not one.
func pointOf(stmt any, text string) *point {
	m, _ := stmt.(map[string]any)
	node, _ := m["node"].(map[string]any)
	if str(node, "type") != "SELECT_NODE" {
		return nil
	}
	from, _ := node["from_table"].(map[string]any)
	if str(from, "type") != "BASE_TABLE" || !onePlainSelect(node) {
		return nil
	}
	names := []string{strings.ToLower(str(from, "table_name"))}
	if a := str(from, "alias"); a != "" {
		names = []string{strings.ToLower(a)}
	}
	p := &point{vals: map[string]string{}}
	var conds []map[string]any
	flattenAnd(node["where_clause"], &conds)
	for _, c := range conds {
		if str(c, "type") != "COMPARE_EQUAL" {
			continue
		}
		l, _ := c["left"].(map[string]any)
		r, _ := c["right"].(map[string]any)
		if l["class"] == "CONSTANT" {
			l, r = r, l
		}
		col, lit := columnOf(l, names), integerAt(r, text)
		if col != "" && lit != "" {
			p.vals[col] = lit
		}
	}
	return p
}

// onePlainSelect reports whether the select node v holds no other SELECT,
// CTE or shape of pointShapes, and no column named by more than a table
// and a column.
func onePlainSelect(v any) bool {
	selects := 0
	ok := true
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			typ := str(v, "type")
			switch {
			case typ == "SELECT_NODE":
				selects++
			case pointShapes[typ]:
				ok = false
			case typ == "COLUMN_REF" && len(strs(v["column_names"])) > 2:
				ok = false
			}
			if cm, _ := v["cte_map"].(map[string]any); cm != nil {
				if entries, _ := cm["map"].([]any); len(entries) > 0 {
					ok = false
				}
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(v)
	return ok && selects == 1
}

// flattenAnd appends the conditions AND-ed at the top of v to out.
func flattenAnd(v any, out *[]map[string]any) {
	m, _ := v.(map[string]any)
	if m == nil {
		return
	}
	if str(m, "type") == "CONJUNCTION_AND" {
		ch, _ := m["children"].([]any)
		for _, c := range ch {
			flattenAnd(c, out)
		}
		return
	}
	*out = append(*out, m)
}

// columnOf is the lower-case name of the column reference v (its column
// alone, or qualified by one of names), "" when v is not one.
func columnOf(v map[string]any, names []string) string {
	if v["class"] != "COLUMN_REF" {
		return ""
	}
	n := strs(v["column_names"])
	switch {
	case len(n) == 1:
		return strings.ToLower(n[0])
	case len(n) == 2 && strings.EqualFold(n[0], names[0]):
		return strings.ToLower(n[1])
	}
	return ""
}

// integerAt is the text of the integer literal v in text, "" when v is
// not one (or its text is not where the parse places it).
func integerAt(v map[string]any, text string) string {
	if v["class"] != "CONSTANT" {
		return ""
	}
	val, _ := v["value"].(map[string]any)
	typ, _ := val["type"].(map[string]any)
	if is, _ := val["is_null"].(bool); is || !integerTypes[str(typ, "id")] {
		return ""
	}
	l := loc(v)
	if l < 0 || l >= len(text) {
		return ""
	}
	lit := integerText.FindString(text[l:])
	if lit == "" || l+len(lit) < len(text) && strings.ContainsRune("0123456789.eE_", rune(text[l+len(lit)])) {
		return ""
	}
	return lit
}
