package sqlport

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/dbtrail/dbtrail/internal/views"
)

// tree is what the rewrites need of one SELECT's parse.
type tree struct {
	ctes     map[string]bool // CTE names, lower case
	tables   []fromRef
	compared []columnRef // columns compared with =, <>, <, >, IN, LIKE
	// selected are the byte locations of the select lists' items without
	// an alias that are constants or casts (the values rewriteFuncs
	// wrote; a typed literal's location is inside it).
	selected []int
	// point is the statement as a lookup of one table by key (nil: not one).
	point *point
	// uses are every column reference; plain the byte locations of those
	// that stand alone (colUse.plain).
	uses    []colUse
	plain   map[int]bool
	ordered map[int]bool // the byte locations of ORDER BY's column references
	extreme map[int]bool // those of min()'s and max()'s column arguments
	bare    map[int]bool // those of the select items that are a column
	// rewritable are the ORDER BY column references an expression may
	// replace: of a SELECT without DISTINCT, not naming an alias.
	rewritable map[int]bool
	// items are the first and last byte locations of the select items
	// without an alias that are not a column.
	items [][2]int
}

// fromRef is a table named in FROM/JOIN, at byte loc of the text.
type fromRef struct {
	loc                          int
	catalog, schema, name, alias string
}

// columnRef is a column reference at byte loc, as written (1 to 3 names).
// pad marks one compared by a comparison (=, <>, <, >, IN; not LIKE,
// which MySQL does not pad), lits are the byte locations of the string
// literals it is compared with, params the numbers (from 1, in the order
// of the text's ?) of the parameters and exprs the first and the last
// byte locations in the other expressions' parse.
type columnRef struct {
	loc    int
	names  []string
	pad    bool
	lits   []int
	params []int
	exprs  [][2]int
	others bool // compared with something else than a literal or a parameter
	// odd marks one compared with a subquery or an expression of no
	// location.
	odd bool
}

// colUse is a column reference of the statement at byte loc, as written;
// plain marks one whose answer does not depend on the session's time
// zone: standing alone as a select item (without an alias other than its
// name), an ORDER BY or a GROUP BY expression, or tested by IS [NOT] NULL
// or counted; ordered one that is an ORDER BY expression (or a select
// item one names), extreme one that is min()'s or max()'s argument, bare
// a select item that is the column, aliased or not.
type colUse struct {
	loc     int
	names   []string
	plain   bool
	ordered bool
	extreme bool
	bare    bool
}

// parseTree parses text (DuckDB SQL); ok is false when DuckDB's
// serializer does not take it (not one SELECT, or a syntax error): the
// statement then runs unrewritten, and the session reports its error.
func parseTree(ctx context.Context, text string) (*tree, bool, error) {
	js, err := views.ParseJSON(ctx, text)
	if err != nil {
		return nil, false, nil
	}
	var root struct {
		Error      bool  `json:"error"`
		Statements []any `json:"statements"`
	}
	if err := json.Unmarshal([]byte(js), &root); err != nil {
		return nil, false, fmt.Errorf("sql port: parse tree: %w", err)
	}
	if root.Error || len(root.Statements) != 1 {
		return nil, false, nil
	}
	t := &tree{ctes: map[string]bool{}, point: pointOf(root.Statements[0], text), plain: map[int]bool{}, ordered: map[int]bool{}, extreme: map[int]bool{}, bare: map[int]bool{}, rewritable: map[int]bool{}}
	t.walk(root.Statements[0])
	return t, true, nil
}

// comparisons are the expression types whose column operands compare
// under a collation.
var comparisons = map[string]bool{
	"COMPARE_EQUAL": true, "COMPARE_NOTEQUAL": true, "COMPARE_LESSTHAN": true, "COMPARE_GREATERTHAN": true,
	"COMPARE_LESSTHANOREQUALTO": true, "COMPARE_GREATERTHANOREQUALTO": true,
	"COMPARE_IN": true, "COMPARE_NOT_IN": true, "COMPARE_BETWEEN": true, "COMPARE_NOT_BETWEEN": true,
}

// likes are LIKE's functions in the parse (MySQL's LIKE follows the
// column's collation too).
var likes = map[string]bool{"~~": true, "!~~": true}

func (t *tree) walk(v any) {
	switch v := v.(type) {
	case map[string]any:
		if cm, ok := v["cte_map"].(map[string]any); ok {
			if entries, ok := cm["map"].([]any); ok {
				for _, e := range entries {
					if e, ok := e.(map[string]any); ok {
						if k, ok := e["key"].(string); ok {
							t.ctes[strings.ToLower(k)] = true
						}
					}
				}
			}
		}
		typ, _ := v["type"].(string)
		if typ == "SELECT_NODE" {
			t.markPlain(v)
		}
		if typ == "SET_OPERATION_NODE" {
			t.markOrders(v, nil)
		}
		if typ == "COLUMN_REF" {
			l := loc(v)
			t.uses = append(t.uses, colUse{loc: l, names: strs(v["column_names"]), plain: l >= 0 && t.plain[l], ordered: l >= 0 && t.ordered[l],
				extreme: l >= 0 && t.extreme[l], bare: l >= 0 && t.bare[l]})
		}
		// IS [NOT] NULL and count() of a column answer alike in any zone.
		fname := strings.ToLower(str(v, "function_name"))
		if typ == "OPERATOR_IS_NULL" || typ == "OPERATOR_IS_NOT_NULL" || fname == "count" || fname == "min" || fname == "max" {
			ch, _ := v["children"].([]any)
			for _, c := range ch {
				if cm, ok := c.(map[string]any); ok && cm["class"] == "COLUMN_REF" && loc(cm) >= 0 {
					if fname == "min" || fname == "max" {
						t.extreme[loc(cm)] = true
					} else {
						t.plain[loc(cm)] = true
					}
				}
			}
		}
		if typ == "SELECT_NODE" {
			items, _ := v["select_list"].([]any)
			for _, it := range items {
				if e, ok := it.(map[string]any); ok && str(e, "alias") == "" && (e["class"] == "CONSTANT" || e["class"] == "CAST") {
					l := loc(e)
					if c, ok := e["child"].(map[string]any); ok && l < 0 {
						l = loc(c) // a typed literal (TIMESTAMP '…') has its string's location
					}
					t.selected = append(t.selected, l)
				}
			}
		}
		if typ == "BASE_TABLE" {
			t.tables = append(t.tables, fromRef{loc: loc(v), catalog: str(v, "catalog_name"),
				schema: str(v, "schema_name"), name: str(v, "table_name"), alias: str(v, "alias")})
		}
		if typ == "SUBQUERY" && str(v, "subquery_type") == "ANY" {
			t.anyCompared(v)
		}
		fn, _ := v["function_name"].(string)
		if comparisons[typ] || likes[fn] {
			sides := operands(v)
			for i, side := range sides {
				if c, ok := side.(map[string]any); ok && c["class"] == "COLUMN_REF" {
					ref := columnRef{loc: loc(c), names: strs(c["column_names"]), pad: comparisons[typ]}
					for j, other := range sides {
						o, ok := other.(map[string]any)
						switch {
						case !ok || j == i:
						case o["class"] == "CONSTANT" && loc(o) >= 0:
							ref.lits = append(ref.lits, loc(o))
						case o["class"] == "PARAMETER":
							if n, err := strconv.Atoi(str(o, "identifier")); err == nil && n > 0 {
								ref.params = append(ref.params, n)
							}
						case o["class"] == "COLUMN_REF":
							ref.others = true
						case o["class"] != "SUBQUERY" && firstLoc(o) >= 0:
							first, last := locRange(o)
							ref.exprs = append(ref.exprs, [2]int{first, last})
							ref.others = true
						default:
							ref.others, ref.odd = true, true
						}
					}
					t.compared = append(t.compared, ref)
				}
			}
		}
		for _, child := range v {
			t.walk(child)
		}
	case []any:
		for _, child := range v {
			t.walk(child)
		}
	}
}

// markPlain marks the column references of select node v that stand alone:
// a select item without an alias other than its column's name, a GROUP BY
// expression, an ORDER BY expression.
func (t *tree) markPlain(v map[string]any) {
	mark := func(e any, aliased bool) {
		c, _ := e.(map[string]any)
		if c["class"] != "COLUMN_REF" || loc(c) < 0 {
			return
		}
		names := strs(c["column_names"])
		if a := str(c, "alias"); aliased && a != "" && (len(names) == 0 || !strings.EqualFold(a, names[len(names)-1])) {
			return
		}
		t.plain[loc(c)] = true
	}
	items, _ := v["select_list"].([]any)
	for _, it := range items {
		mark(it, true)
	}
	exprs, _ := v["group_expressions"].([]any)
	for _, g := range exprs {
		mark(g, false)
	}
	t.markOrders(v, items)
}

// markOrders marks the ORDER BY column references of node v (a select or
// a set operation: UNION… ORDER BY) plain and ordered, and the select
// items of items they name by position (ORDER BY 1) or by alias (a bare
// column item) ordered too; each select item that is a bare column,
// aliased or not, is marked bare.
func (t *tree) markOrders(v map[string]any, items []any) {
	for _, it := range items {
		c, _ := it.(map[string]any)
		switch {
		case c["class"] == "COLUMN_REF" && loc(c) >= 0:
			t.bare[loc(c)] = true
		case str(c, "alias") == "":
			if first, last := locRange(c); first >= 0 {
				t.items = append(t.items, [2]int{first, last})
			}
		}
	}
	mods, _ := v["modifiers"].([]any)
	distinct := false
	for _, m := range mods {
		mm, _ := m.(map[string]any)
		distinct = distinct || mm["type"] == "DISTINCT_MODIFIER"
	}
	for _, m := range mods {
		mm, _ := m.(map[string]any)
		orders, _ := mm["orders"].([]any)
		for _, o := range orders {
			om, _ := o.(map[string]any)
			e, _ := om["expression"].(map[string]any)
			if item := namedItem(e, items); item != nil {
				t.ordered[loc(item)] = true
			}
			if e["class"] == "COLUMN_REF" && loc(e) >= 0 {
				t.plain[loc(e)], t.ordered[loc(e)] = true, true
				t.rewritable[loc(e)] = v["type"] == "SELECT_NODE" && !distinct && !isAlias(e, items)
			}
		}
	}
}

// isAlias reports whether the ORDER BY column reference e names a select
// item of items by its alias.
func isAlias(e map[string]any, items []any) bool {
	names := strs(e["column_names"])
	for _, it := range items {
		c, _ := it.(map[string]any)
		if len(names) == 1 && strings.EqualFold(str(c, "alias"), names[0]) {
			return true
		}
	}
	return false
}

// namedItem is the bare column select item of items that ORDER BY
// expression e names by its position (a number) or its alias, or nil.
func namedItem(e map[string]any, items []any) map[string]any {
	pick := func(it any) map[string]any {
		c, _ := it.(map[string]any)
		if c["class"] != "COLUMN_REF" || loc(c) < 0 {
			return nil
		}
		return c
	}
	switch e["class"] {
	case "CONSTANT":
		val, _ := e["value"].(map[string]any)
		if n, ok := val["value"].(float64); ok && n >= 1 && int(n) <= len(items) {
			return pick(items[int(n)-1])
		}
	case "COLUMN_REF":
		if names := strs(e["column_names"]); len(names) == 1 {
			for _, it := range items {
				if c := pick(it); c != nil && strings.EqualFold(str(c, "alias"), names[0]) {
					return c
				}
			}
		}
	}
	return nil
}

// anyCompared records the column an IN (SELECT …) or = ANY (SELECT …)
// subquery v compares (its child, when a column) as compared with the
// subquery's one select item (exprs), or with something the rewrite cannot
// delimit (odd: a set operation, more items).
func (t *tree) anyCompared(v map[string]any) {
	c, _ := v["child"].(map[string]any)
	if c["class"] != "COLUMN_REF" || loc(c) < 0 {
		return
	}
	ref := columnRef{loc: loc(c), names: strs(c["column_names"]), pad: true, others: true}
	sq, _ := v["subquery"].(map[string]any)
	node, _ := sq["node"].(map[string]any)
	items, _ := node["select_list"].([]any)
	first, last := -1, -1
	if node["type"] == "SELECT_NODE" && len(items) == 1 {
		first, last = locRange(items[0])
	}
	if first >= 0 {
		ref.exprs = append(ref.exprs, [2]int{first, last})
	} else {
		ref.odd = true
	}
	t.compared = append(t.compared, ref)
}

// operands are a comparison's compared expressions: left and right, an
// IN's value tested and its list, BETWEEN's value and bounds, or a LIKE's
// value tested.
func operands(v map[string]any) []any {
	if in, ok := v["input"]; ok {
		return []any{in, v["lower"], v["upper"]} // BETWEEN
	}
	if l, ok := v["left"]; ok {
		return []any{l, v["right"]}
	}
	if ch, ok := v["children"].([]any); ok && len(ch) > 0 {
		if t, _ := v["type"].(string); t == "COMPARE_IN" || t == "COMPARE_NOT_IN" {
			return ch
		}
		return ch[:1]
	}
	return nil
}

// firstLoc is the smallest byte location in expression v's parse (-1:
// none).
func firstLoc(v any) int {
	first, _ := locRange(v)
	return first
}

// locRange are the smallest and the largest byte locations in expression
// v's parse (-1: none). The text of v begins at or before the first (a
// parenthesis or a call's name may have none) and ends after the last.
func locRange(v any) (int, int) {
	first, last := -1, -1
	add := func(f, l int) {
		if f >= 0 && (first < 0 || f < first) {
			first = f
		}
		if l > last {
			last = l
		}
	}
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["query_location"]; ok && loc(v) >= 0 {
			add(loc(v), loc(v))
		}
		for _, c := range v {
			add(locRange(c))
		}
	case []any:
		for _, c := range v {
			add(locRange(c))
		}
	}
	return first, last
}

func loc(v map[string]any) int {
	f, _ := v["query_location"].(float64)
	if f < 0 || f > 1<<40 {
		return -1
	}
	return int(f)
}

func str(v map[string]any, k string) string {
	s, _ := v[k].(string)
	return s
}

func strs(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			s, _ := x.(string)
			out = append(out, s)
		}
	}
	return out
}

// nameAt reads the dotted name (bare words or "quoted" parts) starting at
// byte i of text: its parts and where it ends.
func nameAt(text string, i int) ([]string, int, bool) {
	var parts []string
	for {
		if i >= len(text) {
			return nil, 0, false
		}
		if text[i] == '"' {
			j := i + 1
			for ; j < len(text); j++ {
				if text[j] == '"' {
					if j+1 < len(text) && text[j+1] == '"' {
						j++
						continue
					}
					break
				}
			}
			if j >= len(text) {
				return nil, 0, false
			}
			parts = append(parts, strings.ReplaceAll(text[i+1:j], `""`, `"`))
			i = j + 1
		} else {
			j := i
			for j < len(text) && isWord(text[j]) {
				j++
			}
			if j == i {
				return nil, 0, false
			}
			parts = append(parts, text[i:j])
			i = j
		}
		if i < len(text) && text[i] == '.' {
			i++
			continue
		}
		return parts, i, true
	}
}
