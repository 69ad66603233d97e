package sqlport

import "testing"

func TestTranslate(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT `id`, `a``b` FROM `shop`.`orders` LIMIT 10, 5;": `SELECT "id", "a` + "`" + `b" FROM "shop"."orders" LIMIT 5 OFFSET 10`,
		"SELECT 'it''s `x`', \"dq 'x'\" FROM t":                 `SELECT 'it''s ` + "`x`" + `', 'dq ''x''' FROM t`,
		"select * from t limit 3":                               "select * from t limit 3",
	} {
		got, err := translate(in)
		if err != nil || got != want {
			t.Errorf("translate(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"SELECT 'open", "SELECT `open FROM t"} {
		if _, err := translate(bad); err == nil {
			t.Errorf("translate(%q): no error", bad)
		}
	}
}

func TestClassify(t *testing.T) {
	for in, want := range map[string]kind{
		"INSERT INTO t VALUES (1)":                    kindWrite,
		"  update t set a=1":                          kindWrite,
		"DROP TABLE t":                                kindWrite,
		"LOAD DATA LOCAL INFILE 'x' INTO TABLE t":     kindWrite,
		"SELECT * FROM t INTO OUTFILE '/tmp/x'":       kindWrite,
		"SET @@dbtrail_at = 'seq:42'":                 kindSetAt,
		"SET NAMES utf8mb4":                           kindSetOther,
		"SET autocommit=1":                            kindSetOther,
		"COMMIT":                                      kindSetOther,
		"START TRANSACTION READ ONLY":                 kindSetOther,
		"USE `shop`":                                  kindUse,
		"SHOW DATABASES":                              kindShowDatabases,
		"SHOW FULL TABLES FROM shop":                  kindShowTables,
		"SHOW COLUMNS FROM `shop`.`orders`":           kindShowColumns,
		"DESCRIBE orders":                             kindShowColumns,
		"SELECT @@version, @@session.version_comment": kindVariable,
		"SELECT @@dbtrail_cut":                        kindVariable,
		"SELECT 1":                                    kindSelect,
		"/* c */ INSERT INTO t VALUES (1)":            kindWrite,
		"-- c\n# d\nDELETE FROM t":                    kindWrite,
		"/*!40101 SET NAMES utf8 */":                  kindSetOther,
		"/* mysql-connector-j */SHOW VARIABLES":       kindShowMeta,
	} {
		p, err := classify(in)
		if err != nil || p.kind != want {
			t.Errorf("classify(%q) = %v, %v; want %v", in, p.kind, err, want)
		}
	}
	p, _ := classify("SET @@dbtrail_at = '2026-12-01 10:41:59'")
	if p.arg != "2026-12-01 10:41:59" {
		t.Errorf("dbtrail_at %q", p.arg)
	}
	if _, err := classify("SET @@dbtrail_at = 42"); err == nil {
		t.Error("SET @@dbtrail_at = 42: no error")
	}
}

// TestParamLocs: a DuckDB statement's parameters, not a ? in a string, a
// quoted identifier or a comment.
func TestParamLocs(t *testing.T) {
	text := `SELECT '?', "a?""b", x FROM t -- ?` + "\n" + `WHERE a = ? /* ? */ AND 'it''s?' <> ?`
	got := paramLocs(text)
	if len(got) != 2 || text[got[0]] != '?' || text[got[1]] != '?' || got[1] != len(text)-1 {
		t.Fatalf("paramLocs(%q) = %v", text, got)
	}
}
