package schema

import (
	"strings"
	"testing"
)

func TestTokenize(t *testing.T) {
	for _, s := range []string{
		"CREATE TABLE `a``b` (x INT) -- c\n",
		`SELECT 'it''s', "q\"x", 'back\\', # c
		 1.5e3 /* block */ x`,
		"'unterminated",
		"/* unterminated",
		"a--b -- c",
	} {
		var b strings.Builder
		for _, tk := range tokenize(s) {
			b.WriteString(tk.text)
		}
		if b.String() != s {
			t.Errorf("tokens of %q join to %q", s, b.String())
		}
	}
	toks := tokenize("a 'x;y' `z w` /* k */ -- l\n#m\n;")
	var kinds []tokKind
	for _, tk := range toks {
		if tk.kind != tkSpace {
			kinds = append(kinds, tk.kind)
		}
	}
	want := []tokKind{tkWord, tkString, tkIdent, tkComment, tkComment, tkComment, tkPunct}
	if len(kinds) != len(want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Errorf("token %d kind %v, want %v", i, kinds[i], want[i])
		}
	}
	// executable comments are unwrapped, plain ones kept
	var b strings.Builder
	for _, tk := range tokenize("A /*!40101 B */ C /*M!100100 D */ /* E */") {
		b.WriteString(tk.text)
	}
	if got := strings.Join(strings.Fields(b.String()), " "); got != "A B C D /* E */" {
		t.Errorf("executable comments: %q", got)
	}
}

func TestUnquote(t *testing.T) {
	for lit, want := range map[string]string{
		`'it''s'`:     "it's",
		`'a\'b'`:      "a'b",
		`'back\\sl'`:  `back\sl`,
		`'nl\n\t\0'`:  "nl\n\t\x00",
		`"dq""x"`:     `dq"x`,
		`'pct\%\_'`:   `pct\%\_`,
		`''`:          "",
		`'unknown\q'`: "unknownq",
	} {
		if got := unquoteString(lit); got != want {
			t.Errorf("unquoteString(%s) = %q, want %q", lit, got, want)
		}
	}
	if got := unquoteIdent(token{tkIdent, "`a``b`"}); got != "a`b" {
		t.Errorf("unquoteIdent = %q", got)
	}
}

func TestPrepare(t *testing.T) {
	cases := []struct {
		in   string
		kind stmtKind
		want string // substring of the rewritten SQL, or of the retry when prefixed by "retry:"
	}{
		{"create table t (u uuid not null)", stmtCreateTable, "u BINARY(16) not null COMMENT '__dbtrail_type__:uuid'"},
		{"CREATE TABLE t (`uuid` INT, x INET4)", stmtCreateTable, "`uuid` INT, x BINARY(4) COMMENT '__dbtrail_type__:inet4')"},
		{"CREATE TABLE t (c VARCHAR(5) DEFAULT 'UUID', KEY uuid (c))", stmtCreateTable, "DEFAULT 'UUID', KEY uuid (c))"},
		{"CREATE OR REPLACE TABLE t (a INT)", stmtCreateTable, "CREATE   TABLE t (a INT)"},
		{"ALTER TABLE t ADD COLUMN g POINT AFTER a", stmtAlterTable, "g LONGBLOB COMMENT '__dbtrail_type__:point' AFTER a"},
		{"ALTER TABLE t CHANGE a uuid UUID FIRST", stmtAlterTable, "a uuid BINARY(16) COMMENT '__dbtrail_type__:uuid' FIRST"},
		{"ALTER TABLE t ADD UNIQUE KEY IF NOT EXISTS k (a)", stmtAlterTable, "ADD UNIQUE KEY  k (a)"},
		{"ALTER ONLINE TABLE IF EXISTS t WAIT 3 ADD a INT", stmtAlterTable, "TABLE   t   ADD a INT"},
		{"ALTER TABLE t ADD a INT, PAGE_COMPRESSED=1 DEFAULT CHARSET latin1", stmtAlterTable, "retry:ADD a INT,  DEFAULT CHARSET=latin1"},
		{"CREATE TABLE t (a INT) ENGINE=Aria PAGE_CHECKSUM=1 COLLATE=utf8mb4_uca1400_ai_ci", stmtCreateTable, "retry:CREATE TABLE t (a INT) DEFAULT COLLATE=utf8mb4_bin"},
		{"CREATE TABLE t (a INT DEFAULT (1+f(2)) CHECK (a > 0), b INT AS (a*2) VIRTUAL)", stmtCreateTable, "retry:CREATE TABLE t (a INT  , b INT AS (0) VIRTUAL)"},
		{"CREATE TABLE t (a VARCHAR(3) COMPRESSED=zlib INVISIBLE, b INT PERSISTENT)", stmtCreateTable, "a VARCHAR(3)   , b INT STORED)"},
		{"CREATE TABLE t (a CHAR(4) BYTE)", stmtCreateTable, "a BINARY(4) )"},
		{"RENAME TABLE IF EXISTS a TO b NOWAIT", stmtRenameTable, "RENAME TABLE   a TO b "},
		{"DROP TABLE IF EXISTS a WAIT 1", stmtDropTable, "DROP TABLE IF EXISTS a  "},
		{"CREATE SPATIAL INDEX i ON t (g)", stmtCreateIndex, "CREATE  INDEX i ON t (g)"},
		{"CREATE DATABASE d", stmtCreateDB, "CREATE DATABASE d"},
		{"CREATE DEFINER=root VIEW v AS SELECT 1", stmtOther, "CREATE DEFINER=root VIEW v AS SELECT 1"},
		{"  /* lead */ truncate t", stmtTruncate, "truncate t"},
	}
	for _, tc := range cases {
		p := prepare(tc.in)
		if p.kind != tc.kind {
			t.Errorf("prepare(%q) kind %v, want %v", tc.in, p.kind, tc.kind)
		}
		got, want := p.sql, tc.want
		if strings.HasPrefix(want, "retry:") {
			got, want = p.retry, strings.TrimPrefix(want, "retry:")
		}
		norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
		if !strings.Contains(norm(got), norm(want)) {
			t.Errorf("prepare(%q):\n got %q\nwant it to contain %q", tc.in, got, want)
		}
	}
	if p := prepare("CREATE TABLE t (a INT) WITH SYSTEM VERSIONING"); p.unsupported == "" {
		t.Error("system versioning not flagged")
	}
	if p := prepare("CREATE TABLE t (a INT WITHOUT SYSTEM VERSIONING)"); p.unsupported != "" || strings.Contains(p.sql, "VERSIONING") {
		t.Errorf("WITHOUT SYSTEM VERSIONING on a column: %q %q", p.unsupported, p.sql)
	}
}
