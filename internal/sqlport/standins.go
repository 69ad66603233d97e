package sqlport

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/views"
)

// guardedDates are the edits that make a statement fail on a row whose
// DATE, DATETIME or TIMESTAMP column holds a stored value with a zero or
// impossible part ('0000-00-00', '2024-02-30') where the exact views'
// stand-in for it (a date far before year 0) would answer otherwise than
// MySQL: in a function or arithmetic (MySQL answers NULL for DATE_ADD, 0
// for YEAR…), and, unless it is the zero date, compared, ordered or in
// min()/max() (the stand-in sorts before every real date, where MySQL
// sorts '2024-02-30' after 2024-02-29). Selected, grouped, counted or
// tested for NULL it is exact; in an ORDER BY of a SELECT DISTINCT, of a
// UNION or naming an alias it is left as it is (an impossible date sorts
// first there). The error names the column; real
// dates answer as they are.
func guardedDates(text string, t *tree, resolved map[int]*views.TableRef, lookup func(string, string) (*tableInfo, error)) ([]edit, error) {
	compared := map[int]bool{}
	for _, c := range t.compared {
		compared[c.loc] = true
	}
	var edits []edit
	var guarded []int
	for _, u := range t.uses {
		if u.bare || u.plain && !(u.ordered && t.rewritable[u.loc]) {
			continue // as it is; an ORDER BY of DISTINCT, UNION or an alias keeps its text
		}
		c, mixed, err := tableColumn(u.names, t, resolved, lookup, func(c schema.Column) bool {
			return c.Type == "date" || c.Type == "datetime" || c.Type == "timestamp"
		})
		if err != nil {
			return nil, err
		}
		_, end, ok := nameAt(text, u.loc)
		if c == nil || mixed || !ok {
			continue // a guard over another table's column of the name would not bind
		}
		col, name := text[u.loc:end], strings.Join(u.names, ".")
		cond, why := views.StandInSQL(col), fmt.Sprintf("the column %s holds a date with a zero or impossible part, used in a function or arithmetic: "+
			"MySQL answers such a date its own way (NULL, or 0 parts), which the dbtrail SQL port does not compute; select the column as it is, or filter the rows out", name)
		if u.ordered || u.extreme || compared[u.loc] {
			cond, why = views.MisorderedSQL(col), fmt.Sprintf("the column %s holds a date with an impossible part (not the zero date), compared, ordered or in min()/max(): "+
				"MySQL sorts it among the real dates by its parts, which the dbtrail SQL port's dates cannot; select the column as it is, or filter the rows out", name)
		}
		edits = append(edits, edit{u.loc, end, fmt.Sprintf("(CASE WHEN %s THEN error(%s) ELSE %s END)", cond, sqlString(why), col)})
		guarded = append(guarded, u.loc)
	}
	return append(edits, itemNames(text, t, guarded)...), nil
}

// itemNames are the edits that keep the name of each select item without
// an alias that holds a guarded column (at a byte of guarded): its text
// as written, as MySQL names it, not the guard's. An item whose text is
// not delimited keeps DuckDB's name.
func itemNames(text string, t *tree, guarded []int) []edit {
	var out []edit
	m := ""
	for _, it := range t.items {
		if !slices.ContainsFunc(guarded, func(l int) bool { return l >= it[0] && l <= it[1] }) {
			continue
		}
		if m == "" {
			m = operandText(text)
		}
		if start, end, ok := itemSpan(m, it[0], it[1]); ok {
			out = append(out, edit{end, end, " AS " + views.QuoteIdent(text[start:end])})
		}
	}
	return out
}

// itemSpan is the span, in m (operandText), of the select item whose
// parse holds the byte locations first to last: exprSpan's, widened over
// the parentheses around it; false unless a comma, FROM or the text's end
// follows it.
func itemSpan(m string, first, last int) (int, int, bool) {
	start, end, ok := exprSpan(m, first, last)
	next := func(i int) int {
		for i < len(m) && strings.ContainsRune(" \t\r\n", rune(m[i])) {
			i++
		}
		return i
	}
	prev := func(i int) int {
		for i > 0 && strings.ContainsRune(" \t\r\n", rune(m[i-1])) {
			i--
		}
		return i
	}
	for ok && next(end) < len(m) && m[next(end)] == ')' && prev(start) > 0 && m[prev(start)-1] == '(' {
		start, end = prev(start)-1, next(end)+1
	}
	n := next(end)
	return start, end, ok && (n == len(m) || m[n] == ',' || m[n] == ';' || strings.HasPrefix(m[n:], "FROM") && (n+4 == len(m) || !isWord(m[n+4])))
}
