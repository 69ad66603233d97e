package sqlport

import (
	"strings"
	"testing"
)

// TestHavingAsWhere: a HAVING without GROUP BY or aggregate becomes a
// WHERE condition with the select list's aliases it names replaced by their
// expressions; anything else is left as it is (compared by words).
func TestHavingAsWhere(t *testing.T) {
	same := func(q string) [2]string { return [2]string{q, q} }
	for _, c := range [][2]string{
		{`SELECT a AS x FROM t HAVING x > 1`, `SELECT a AS x FROM t WHERE (a) > 1 `},
		{`SELECT a AS x, "b" AS "Y" FROM t WHERE b = 1 HAVING x = 'x' AND "y" IN (1, NULL) ORDER BY x LIMIT 1`,
			`SELECT a AS x, "b" AS "Y" FROM t WHERE ( b = 1 ) AND ( (a) = 'x' AND ("b") IN (1, NULL) ) ORDER BY x LIMIT 1`},
		{`SELECT CASE WHEN k = 'B' THEN 'T' ELSE k END AS k FROM t HAVING k IN (?, ?) ORDER BY k`,
			`SELECT CASE WHEN k = 'B' THEN 'T' ELSE k END AS k FROM t WHERE (CASE WHEN k = 'B' THEN 'T' ELSE k END) IN (?, ?) ORDER BY k`},
		{`SELECT a AS x FROM t HAVING t.x > 1 AND x(1) = 2`, `SELECT a AS x FROM t WHERE t.x > 1 AND x(1) = 2 `},
		{`SELECT DISTINCT a AS x FROM t HAVING x > 1`, `SELECT DISTINCT a AS x FROM t WHERE (a) > 1`},
		same(`SELECT count(*) AS n FROM t HAVING n > 1`),
		same(`SELECT a FROM t GROUP BY a HAVING a > 1`),
		same(`SELECT * FROM (SELECT a FROM t HAVING a > 1) s`),
		same(`SELECT ? AS x FROM t HAVING x = 1`),
		same(`SELECT 'HAVING' AS h FROM t`),
		same(`WITH c AS (SELECT 1) SELECT a AS x FROM c HAVING x > 1`),
		same(`SELECT a AS x FROM t HAVING x > 1 UNION SELECT 1`),
	} {
		if got := havingAsWhere(c[0]); strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(c[1]), " ") {
			t.Errorf("havingAsWhere(%s)\n = %s\nwant %s", c[0], got, c[1])
		}
	}
	if got := havingAsWhere("SELECT a AS x FROM t HAVING x > 1"); strings.Contains(strings.ToUpper(got), "HAVING") {
		t.Errorf("a HAVING left: %s", got)
	}
}
