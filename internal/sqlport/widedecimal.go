package sqlport

import (
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/views"
)

// wideDecimals refuses a statement that uses a DECIMAL column of more
// than views.MaxDecimalPrecision digits other than as it is: the exact
// views hold such a column as its stored text (DuckDB's DECIMAL stops at
// 38 digits), which is exact when selected, grouped by, counted or tested
// for NULL, but compares, orders and computes as text, an answer MySQL
// would not give. Error 1235 names the column.
func wideDecimals(t *tree, resolved map[int]*views.TableRef, lookup func(string, string) (*tableInfo, error)) error {
	for _, u := range t.uses {
		if (u.plain || u.bare) && !u.ordered {
			continue
		}
		c, _, err := tableColumn(u.names, t, resolved, lookup, func(c schema.Column) bool {
			return c.Type == "decimal" && c.Precision > views.MaxDecimalPrecision
		})
		if err != nil {
			return err
		}
		if c == nil {
			continue
		}
		name := strings.Join(u.names, ".")
		return mysql.NewError(mysql.ER_NOT_SUPPORTED_YET, fmt.Sprintf(
			"the dbtrail SQL port does not translate the DECIMAL(%d,%d) column %s compared, ordered or used in an expression: "+
				"beyond %d digits it holds the column's exact text, which compares and orders as text, not as a number; "+
				"select, group by or count the column as it is, or use CAST(%s AS DOUBLE) for an approximate value",
			c.Precision, c.Scale, name, views.MaxDecimalPrecision, name))
	}
	return nil
}

// tableColumn is the column named names, of the statement's tables that
// may hold it, for which match holds (nil: none), and whether another of
// them has one of the name for which it does not (mixed: the statement's
// scopes are not told apart, so which one a use reads is not known).
func tableColumn(names []string, t *tree, resolved map[int]*views.TableRef, lookup func(string, string) (*tableInfo, error),
	match func(schema.Column) bool) (found *schema.Column, mixed bool, err error) {
	for _, ref := range candidates(names, t, resolved) {
		info, err := lookup(ref.Schema, ref.Table)
		if err != nil {
			return nil, false, err
		}
		if info.def == nil {
			continue
		}
		i := info.def.ColumnIndex(names[len(names)-1])
		switch {
		case i < 0:
		case match(info.def.Columns[i]):
			c := info.def.Columns[i]
			found = &c
		default:
			mixed = true
		}
	}
	return found, mixed, nil
}
