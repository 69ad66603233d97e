package sqlport

import (
	"fmt"
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
// tested for NULL it is exact. The error names the column; real dates
// answer as they are.
func guardedDates(text string, t *tree, resolved map[int]*views.TableRef, lookup func(string, string) (*tableInfo, error)) ([]edit, error) {
	compared := map[int]bool{}
	for _, c := range t.compared {
		compared[c.loc] = true
	}
	var edits []edit
	for _, u := range t.uses {
		if u.plain && !u.ordered {
			continue
		}
		c, err := tableColumn(u.names, t, resolved, lookup, func(c schema.Column) bool {
			return c.Type == "date" || c.Type == "datetime" || c.Type == "timestamp"
		})
		if err != nil {
			return nil, err
		}
		_, end, ok := nameAt(text, u.loc)
		if c == nil || !ok {
			continue
		}
		col, name := text[u.loc:end], strings.Join(u.names, ".")
		cond, why := views.StandInSQL(col), fmt.Sprintf("the column %s holds a date with a zero or impossible part, used in a function or arithmetic: "+
			"MySQL answers such a date its own way (NULL, or 0 parts), which the dbtrail SQL port does not compute; select the column as it is, or filter the rows out", name)
		if u.ordered || u.extreme || compared[u.loc] {
			cond, why = views.MisorderedSQL(col), fmt.Sprintf("the column %s holds a date with an impossible part (not the zero date), compared, ordered or in min()/max(): "+
				"MySQL sorts it among the real dates by its parts, which the dbtrail SQL port's dates cannot; select the column as it is, or filter the rows out", name)
		}
		edits = append(edits, edit{u.loc, end, fmt.Sprintf("(CASE WHEN %s THEN error(%s) ELSE %s END)", cond, sqlString(why), col)})
	}
	return edits, nil
}
