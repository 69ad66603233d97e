package mydumper

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// Table is one table of a table list (Run.Tables): a dump of some tables
// only.
type Table struct {
	Schema, Name string
}

// String is the table as the list names it, "schema.table".
func (t Table) String() string { return t.Schema + "." + t.Name }

// ParseTables reads a table list given as "schema.table" names, sorted
// and without duplicates. A name is refused unless each part is 1 to 64
// letters, digits, '_' or '$': the list becomes a regular expression of
// mydumper (tablesRegex) and a name must be matched as it is written. A
// system schema, or an empty list, is refused too. Errors name the entry
// and why.
func ParseTables(names []string) ([]Table, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("table list: empty")
	}
	out := make([]Table, 0, len(names))
	for i, n := range names {
		sch, tbl, ok := strings.Cut(n, ".")
		if !ok {
			return nil, fmt.Errorf("table list entry %d %q: not schema.table", i+1, n)
		}
		for _, part := range []string{sch, tbl} {
			if err := checkPart(part); err != nil {
				return nil, fmt.Errorf("table list entry %d %q: %w", i+1, n, err)
			}
		}
		if schema.IsSystemSchema(sch) {
			return nil, fmt.Errorf("table list entry %d %q: %s is a system schema", i+1, n, sch)
		}
		out = append(out, Table{Schema: sch, Name: tbl})
	}
	slices.SortFunc(out, func(a, b Table) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(out), nil
}

// checkPart refuses a schema or table name that mydumper's table list
// cannot carry as is (ParseTables).
func checkPart(p string) error {
	if p == "" || len(p) > 64 {
		return fmt.Errorf("a name must have 1 to 64 characters, %q has %d", p, len(p))
	}
	for _, r := range p {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '$' {
			return fmt.Errorf("%q holds %q: a name in a table list may hold only letters, digits, '_' and '$'", p, r)
		}
	}
	return nil
}

// tablesRegex is mydumper's --regex for exactly tables: mydumper 0.10's
// --tables-list writes no schema files and hangs at the end of the dump,
// while --regex takes the path of a whole dump and only leaves out the
// 'schema.table' names it does not match ('$' is the one character of a
// checked name that a regular expression reads as an operator).
func tablesRegex(tables []Table) string {
	parts := make([]string, len(tables))
	for i, t := range tables {
		parts[i] = strings.ReplaceAll(t.Schema, "$", `\$`) + `\.` + strings.ReplaceAll(t.Name, "$", `\$`)
	}
	return "^(" + strings.Join(parts, "|") + ")$"
}
