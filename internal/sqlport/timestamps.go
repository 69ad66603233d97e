package sqlport

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/views"
)

// zonedTimestamps are the edits that make a statement's TIMESTAMP columns
// answer in the session's time zone loc (not UTC), as MySQL converts a
// TIMESTAMP (stored in UTC) to the session's zone wherever it is used. The
// views hold them in UTC, and the port converts them where it can do so
// exactly: a column standing alone (a select item, sent in loc by the
// rows' encoding; ORDER BY and GROUP BY, whose order and groups UTC
// keeps) stays; one compared with string literals only has each literal,
// a time in loc, turned into the same instant in UTC. Any other use (in an
// expression, a function, an aggregate, compared with a parameter, a
// column or an expression) would answer in UTC where MySQL answers in loc:
// it is refused, naming the column, never answered.
func zonedTimestamps(text string, t *tree, resolved map[int]*views.TableRef, lookup func(string, string) (*tableInfo, error),
	loc *time.Location) ([]edit, error) {
	compared := map[int]columnRef{}
	for _, c := range t.compared {
		compared[c.loc] = c
	}
	var edits []edit
	converted := map[int]bool{}
	for _, u := range t.uses {
		ts, _, err := tableColumn(u.names, t, resolved, lookup, func(c schema.Column) bool { return c.Type == "timestamp" })
		if err != nil {
			return nil, err
		}
		if ts == nil || u.plain {
			continue
		}
		name := strings.Join(u.names, ".")
		c, ok := compared[u.loc]
		if !ok || c.others || len(c.params) > 0 || len(c.lits) == 0 {
			return nil, mysql.NewError(mysql.ER_NOT_SUPPORTED_YET, fmt.Sprintf(
				"the dbtrail SQL port does not translate the TIMESTAMP column %s used in an expression, a function or a comparison with other than string literals at time_zone %s: "+
					"it holds TIMESTAMP values in UTC and converts them to the session's zone only where the column is selected, ordered or grouped by as it is, or compared with string literals; "+
					"SET time_zone = '+00:00' to work in UTC, or select the column as it is", name, loc))
		}
		for _, l := range c.lits {
			if converted[l] {
				continue
			}
			e, err := utcLiteral(text, l, loc)
			if err != nil {
				return nil, mysql.NewError(mysql.ER_NOT_SUPPORTED_YET, fmt.Sprintf(
					"the dbtrail SQL port does not translate the TIMESTAMP column %s compared at time_zone %s with %v: write the time as 'YYYY-MM-DD[ hh:mm[:ss[.ffffff]]]'", name, loc, err))
			}
			converted[l] = true
			edits = append(edits, e)
		}
	}
	return edits, nil
}

// mysqlTime is a time as MySQL's string literals write it.
var mysqlTime = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2})(:\d{2}(?:\.\d{1,6})?)?)?$`)

// utcLiteral is the edit that replaces the string literal at byte at of
// text (DuckDB's form), a time in loc, with the same instant in UTC.
func utcLiteral(text string, at int, loc *time.Location) (edit, error) {
	if at >= len(text) || text[at] != '\'' {
		return edit{}, fmt.Errorf("a literal that is not a string")
	}
	end := quotedEnd(text, at, '\'') - 1 // the closing quote
	if end <= at || text[end] != '\'' {
		return edit{}, fmt.Errorf("a string left open")
	}
	body := strings.ReplaceAll(text[at+1:end], "''", "'")
	m := mysqlTime.FindStringSubmatch(strings.TrimSpace(body))
	if m == nil {
		return edit{}, fmt.Errorf("%q", body)
	}
	layout, value := "2006-01-02", m[1]
	if m[2] != "" {
		layout, value = layout+" 15:04", value+" "+m[2]
	}
	if m[3] != "" {
		layout, value = layout+":05.999999", value+m[3]
	}
	tm, err := time.ParseInLocation(layout, value, loc)
	if err != nil {
		return edit{}, fmt.Errorf("%q: %v", body, err)
	}
	return edit{at, end + 1, "'" + tm.UTC().Format("2006-01-02 15:04:05.999999") + "'"}, nil
}
