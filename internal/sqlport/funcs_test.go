package sqlport

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/dbtrail/dbtrail/internal/views"
)

func testFuncEnv() *funcEnv {
	return &funcEnv{now: time.Date(2026, 12, 1, 10, 41, 59, 123456000, time.UTC), db: "shop", user: "viewer",
		variable: func(name string) (any, error) {
			if name == "version" {
				return ServerVersion, nil
			}
			return nil, errors.New("unknown " + name)
		}}
}

func TestRewriteFuncs(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT ifnull(note, '-') FROM t":                                          "SELECT coalesce(CAST(note AS VARCHAR), CAST('-' AS VARCHAR)) FROM t",
		"SELECT NOW(), CURRENT_TIMESTAMP, now(3)":                                  "SELECT TIMESTAMP '2026-12-01 10:41:59', TIMESTAMP '2026-12-01 10:41:59', TIMESTAMP '2026-12-01 10:41:59.123'",
		"SELECT CURDATE(), current_date":                                           "SELECT DATE '2026-12-01', DATE '2026-12-01'",
		"SELECT CONCAT(id, '-', note) FROM t":                                      "SELECT (CAST(id AS VARCHAR) || CAST('-' AS VARCHAR) || CAST(note AS VARCHAR)) FROM t",
		"SELECT t.now, \"now\" FROM t":                                             "SELECT t.now, \"now\" FROM t",
		"SELECT 'NOW()', 'concat(a)'":                                              "SELECT 'NOW()', 'concat(a)'",
		"SELECT DATE_FORMAT(d, '%Y-%m-%d %H:%i')":                                  "SELECT strftime(CAST(d AS TIMESTAMP), '%Y-%m-%d %H:%M')",
		"SELECT date_format(d, '%W %e %M 100%%')":                                  "SELECT strftime(CAST(d AS TIMESTAMP), '%A %-d %B 100%%')",
		"SELECT DATABASE(), USER(), VERSION()":                                     "SELECT 'shop', 'viewer@localhost', '" + ServerVersion + "'",
		"SELECT @@version, @@session.version":                                      "SELECT '" + ServerVersion + "', '" + ServerVersion + "'",
		"SELECT a <=> b, 7 DIV 2 FROM t":                                           "SELECT a  IS NOT DISTINCT FROM  b, 7 // 2 FROM t",
		"SELECT at, \"at\" FROM t":                                                 "SELECT \"at\", \"at\" FROM t",
		"SELECT LENGTH(note) FROM t":                                               "SELECT strlen(CAST(note AS VARCHAR)) FROM t",
		"SELECT UNIX_TIMESTAMP(), FROM_UNIXTIME(5)":                                "SELECT 1796121719, make_timestamp(CAST(round((5) * 1000000) AS BIGINT))",
		"SELECT GROUP_CONCAT(note) FROM t":                                         "SELECT " + concatCapped("string_agg(CAST(note AS VARCHAR), ',')", 0) + " FROM t",
		"SELECT group_concat(DISTINCT a, b ORDER BY a DESC SEPARATOR '; ') FROM t": "SELECT " + concatCapped("string_agg(DISTINCT CAST(a AS VARCHAR) || CAST(b AS VARCHAR), '; ' ORDER BY a DESC)", 0) + " FROM t",
		"SELECT GROUP_CONCAT(IFNULL(note, 'x') SEPARATOR '') FROM t":               "SELECT " + concatCapped("string_agg(CAST(coalesce(CAST(note AS VARCHAR), CAST('x' AS VARCHAR)) AS VARCHAR), '')", 0) + " FROM t",
		"SELECT IFNULL(a, b), COALESCE(a, 1, b) FROM t":                            "SELECT coalesce(a, b), coalesce(a, 1, b) FROM t",
		"SELECT convert_tz(now(), 'UTC', '+00:00')":                                "SELECT CAST(TIMESTAMP '2026-12-01 10:41:59' AS TIMESTAMP)",
	} {
		got, err := rewriteFuncs(in, testFuncEnv())
		if err != nil || got != want {
			t.Errorf("rewriteFuncs(%q)\n = %q, %v\nwant %q", in, got, err, want)
		}
	}
}

func TestRewriteFuncsRefuses(t *testing.T) {
	for in, named := range map[string]string{
		"SELECT DATE_FORMAT(d, '%D') FROM t":        "%D",
		"SELECT DATE_FORMAT(d, fmt) FROM t":         "DATE_FORMAT with the format fmt",
		"SELECT SQL_CALC_FOUND_ROWS * FROM t":       "SQL_CALC_FOUND_ROWS",
		"SELECT * FROM t FORCE INDEX (k)":           "index hints",
		"SELECT * FROM t WHERE a REGEXP 'x'":        "REGEXP",
		"SELECT @x":                                 "user variables",
		"SELECT today()":                            "today",
		"SELECT * FROM t FOR UPDATE":                "locking reads",
		"SELECT GROUP_CONCAT(a SEPARATOR b) FROM t": "SEPARATOR b",
		"SELECT IFNULL(a) FROM t":                   "IFNULL",
		"SELECT convert_tz(d, 'UTC', tz)":           "CONVERT_TZ",
	} {
		_, err := rewriteFuncs(in, testFuncEnv())
		var my *mysql.MyError
		if !errors.As(err, &my) || !strings.Contains(my.Message, named) {
			t.Errorf("rewriteFuncs(%q) = %v; want a MySQL error naming %q", in, err, named)
		}
	}
	// A construct inside a literal is text, not a construct.
	if _, err := rewriteFuncs("SELECT 'a REGEXP b, @x, FOR UPDATE'", testFuncEnv()); err != nil {
		t.Errorf("a literal refused: %v", err)
	}
}

func TestRewriteQualifiesAndCollates(t *testing.T) {
	tables := []views.TableRef{{Schema: "shop", Table: "orders", Columns: []string{"id", "note"}}}
	env := &rewriteEnv{db: "shop", tables: tables, funcs: testFuncEnv(),
		table: func(string, string) (*tableInfo, error) { return &tableInfo{collations: map[string]string{}}, nil }}
	for in, want := range map[string]string{
		`SELECT o.id FROM orders o JOIN shop.orders p ON o.id = p.id`: `SELECT o.id FROM "shop"."orders" o JOIN shop.orders p ON o.id = p.id`,
		`WITH orders AS (SELECT 1 AS id) SELECT id FROM orders`:       `WITH orders AS (SELECT 1 AS id) SELECT id FROM orders`,
		`SELECT (SELECT count(*) FROM "orders") AS n`:                 `SELECT (SELECT count(*) FROM "shop"."orders") AS n`,
		`SELECT 1 FROM DUAL`: `SELECT 1 FROM (SELECT 1 AS dummy) AS "DUAL"`,
	} {
		got, err := rewrite(context.Background(), in, env)
		if err != nil || got != want {
			t.Errorf("rewrite(%q)\n = %q, %v\nwant %q", in, got, err, want)
		}
	}
	var my *mysql.MyError
	if _, err := rewrite(context.Background(), "SELECT * FROM nothere", env); !errors.As(err, &my) || my.Code != mysql.ER_NO_SUCH_TABLE {
		t.Errorf("an unknown table: %v", err)
	}
	env.db = ""
	if _, err := rewrite(context.Background(), "SELECT * FROM orders", env); !errors.As(err, &my) || my.Code != mysql.ER_NO_DB_ERROR {
		t.Errorf("no database: %v", err)
	}
	if _, err := rewrite(context.Background(), "SELECT * FROM information_schema.nosuch", env); !errors.As(err, &my) || my.Code != mysql.ER_UNKNOWN_TABLE {
		t.Errorf("an unknown information_schema table: %v", err)
	}
}

func TestSplitSchemaAt(t *testing.T) {
	for in, want := range map[string][2]string{
		"shop@seq:1234":                {"shop", "seq:1234"},
		"shop@'2026-12-01 10:41:59'":   {"shop", "2026-12-01 10:41:59"},
		"shop@\"2026-12-01 10:41:59\"": {"shop", "2026-12-01 10:41:59"},
		"shop@2026-12-01 10:41:59":     {"shop", "2026-12-01 10:41:59"},
		"shop@gtid:0-1-5":              {"shop", "gtid:0-1-5"},
	} {
		db, at, ok := splitSchemaAt(in)
		if !ok || db != want[0] || at != want[1] {
			t.Errorf("splitSchemaAt(%q) = %q, %q, %v", in, db, at, ok)
		}
	}
	if _, _, ok := splitSchemaAt("shop"); ok {
		t.Error("shop has a moment")
	}
}

func TestClassifyMeta(t *testing.T) {
	for in, want := range map[string]string{
		"SHOW VARIABLES LIKE 'version%'": "VARIABLES|version%",
		"show session variables":         "variables|",
		"SHOW GLOBAL STATUS LIKE 'Ssl%'": "STATUS|Ssl%",
		"SHOW WARNINGS":                  "WARNINGS|",
		"SHOW CHARACTER SET":             "CHARACTER SET|",
		"SHOW FULL TRIGGERS FROM `shop`": "FULL TRIGGERS FROM `shop`|",
		"SHOW GRANTS FOR viewer":         "GRANTS FOR viewer|",
		"SHOW COLLATION LIKE 'utf8mb4%'": "COLLATION|utf8mb4%",
	} {
		p, err := classify(in)
		if err != nil || p.kind != kindShowMeta || p.arg+"|"+p.like != want {
			t.Errorf("classify(%q) = %v %q %q, %v; want %s", in, p.kind, p.arg, p.like, err, want)
		}
	}
	p, err := classify("SHOW VARIABLES WHERE Variable_name = 'sql_mode'")
	if err != nil || p.kind != kindSelect || !strings.Contains(p.sql, "information_schema.SESSION_VARIABLES") {
		t.Errorf("SHOW VARIABLES WHERE: %+v, %v", p, err)
	}
	for in, want := range map[string]string{
		"USE shop@'2026-12-01 10:41:59'": "shop@'2026-12-01 10:41:59'",
		"USE `shop@seq:12`":              "shop@seq:12",
		"USE shop@seq:12;":               "shop@seq:12",
	} {
		p, err := classify(in)
		if err != nil || p.kind != kindUse || p.arg != want {
			t.Errorf("classify(%q) = %v %q, %v", in, p.kind, p.arg, err)
		}
	}
}

func TestLikePattern(t *testing.T) {
	re := likePattern(`version\_%`)
	if !re.MatchString("version_comment") || re.MatchString("versionXcomment") || !likePattern("SQL_MODE").MatchString("sql_mode") {
		t.Error("likePattern")
	}
}
