package sqlport

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/dbtrail/dbtrail/internal/views"
)

// TestPointOf: a statement reading one table by equalities with integer
// literals AND-ed at the top of its WHERE is a point statement with those
// columns; a join, subquery, CTE, set operation or table function is not
// one, and other conditions bind nothing.
func TestPointOf(t *testing.T) {
	for _, c := range []struct {
		q    string
		want string // fmt of the vals; "nil": not a point statement
	}{
		{`SELECT * FROM "app"."t" WHERE "id" = 5`, "map[id:5]"},
		{`SELECT a FROM t AS x WHERE x.ID = 5 AND b = 'z' AND 7 = k2 ORDER BY a LIMIT 1`, "map[id:5 k2:7]"},
		{`SELECT * FROM t WHERE t.id = -12`, "map[id:-12]"},
		{`SELECT * FROM t WHERE id = 99999999999999999999`, "map[id:99999999999999999999]"},
		{`SELECT * FROM t WHERE id = 5 OR id = 6`, "map[]"},
		{`SELECT * FROM t WHERE id = 5.0 AND k = '5' AND y.id = 3 AND id > 4`, "map[]"},
		{`SELECT * FROM t WHERE id = (SELECT 1)`, "nil"},
		{`SELECT * FROM t WHERE id IN (SELECT 1) AND id = 1`, "nil"},
		{`SELECT * FROM t JOIN u ON true WHERE id = 5`, "nil"},
		{`WITH c AS (SELECT 1) SELECT * FROM t WHERE id = 5`, "nil"},
		{`SELECT * FROM t WHERE id = 5 UNION ALL SELECT * FROM t WHERE id = 6`, "nil"},
		{`SELECT * FROM read_parquet('x') WHERE id = 5`, "nil"},
		{`SELECT app.t.id FROM app.t WHERE id = 5`, "nil"},
	} {
		js, err := views.ParseJSON(context.Background(), c.q)
		if err != nil {
			t.Fatal(err)
		}
		var root struct {
			Statements []any `json:"statements"`
		}
		if err := json.Unmarshal([]byte(js), &root); err != nil || len(root.Statements) != 1 {
			t.Fatalf("%s: %v", c.q, err)
		}
		got := "nil"
		if p := pointOf(root.Statements[0], c.q); p != nil {
			got = fmt.Sprint(p.vals)
		}
		if got != c.want {
			t.Errorf("%s: %s, want %s", c.q, got, c.want)
		}
	}
}
