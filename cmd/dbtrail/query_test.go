package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/views/viewstest"
)

// queryFixture publishes a snapshot of a small shop into <dir>/main and
// returns the backup folder.
func queryFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	viewstest.Publish(t, filepath.Join(dir, "main"),
		viewstest.Table{Schema: "shop", Create: `CREATE TABLE orders (id BIGINT PRIMARY KEY, total DECIMAL(12,2),
  status ENUM('new','paid'), placed DATETIME(6), note JSON, shipped DATE, took TIME)`,
			Rows: [][]any{
				{"1", "49.80", "paid", "2026-11-29 08:15:00.500000", `{"sku": "SKU-001"}`, "2026-11-30", "26:00:00"},
				{"2", "9.50", "new", "2026-11-29 09:00:00.000000", nil, "0000-00-00", "-00:00:05"},
				{"3", "-0.05", "new", "0000-00-00 00:00:00.000000", "a\tb\nc", nil, nil},
			}},
		viewstest.Table{Schema: "shop", Create: "CREATE TABLE `Odd Name` (k VARCHAR(5) PRIMARY KEY, `wide 名前` VARCHAR(5))",
			Rows: [][]any{{"x", "名前"}}})
	return dir
}

// runQuery runs `dbtrail query` with args and stdin, and returns its
// output and error output.
func runQuery(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(append([]string{"query", "--memory-limit", "256MB", "--threads", "1", "--temp-dir", t.TempDir()}, args...))
	err := root.Execute()
	return out.String(), errOut.String(), err
}

func TestQueryFormats(t *testing.T) {
	dir := queryFixture(t)
	const q = "SELECT id, total, status, placed, note, shipped, took FROM shop.orders ORDER BY id"
	for _, c := range []struct {
		format, want string
	}{
		{"table", ` id | total | status | placed                | note               | shipped    | took
----+-------+--------+-----------------------+--------------------+------------+-----------
  1 | 49.80 | paid   | 2026-11-29 08:15:00.5 | {"sku": "SKU-001"} | 2026-11-30 | 26:00:00
  2 |  9.50 | new    | 2026-11-29 09:00:00   | NULL               | NULL       | -00:00:05
  3 | -0.05 | new    | NULL                  | a\tb\nc            | NULL       | NULL
(3 rows)
`},
		{"csv", `id,total,status,placed,note,shipped,took
1,49.80,paid,2026-11-29 08:15:00.5,"{""sku"": ""SKU-001""}",2026-11-30,26:00:00
2,9.50,new,2026-11-29 09:00:00,,,-00:00:05
3,-0.05,new,,"a	b
c",,
`},
		{"json", `[
{"id":1,"total":49.80,"status":"paid","placed":"2026-11-29 08:15:00.5","note":"{\"sku\": \"SKU-001\"}","shipped":"2026-11-30","took":"26:00:00"},
{"id":2,"total":9.50,"status":"new","placed":"2026-11-29 09:00:00","note":null,"shipped":null,"took":"-00:00:05"},
{"id":3,"total":-0.05,"status":"new","placed":null,"note":"a\tb\nc","shipped":null,"took":null}
]
`},
	} {
		out, errOut, err := runQuery(t, "", "--backup-dir", dir, "--format", c.format, q)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.format, err, errOut)
		}
		if out != c.want {
			t.Errorf("--format %s:\n got:\n%s\nwant:\n%s", c.format, out, c.want)
		}
	}
	out, _, err := runQuery(t, "", "--backup-dir", dir, "--format", "json", "SELECT * FROM shop.orders WHERE false")
	if err != nil || out != "[]\n" {
		t.Fatalf("empty json: %q %v", out, err)
	}
	var rows []map[string]any
	out, _, _ = runQuery(t, "", "--backup-dir", dir, "--format", "json", q)
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 3 {
		t.Fatalf("json output does not parse: %v\n%s", err, out)
	}
	// --raw: the stored text.
	out, _, err = runQuery(t, "", "--backup-dir", dir, "--raw", "--format", "csv", "SELECT placed, shipped, took, typeof(total) FROM shop.orders WHERE id = 3")
	if want := "placed,shipped,took,typeof(total)\n0000-00-00 00:00:00.000000,,,VARCHAR\n"; err != nil || out != want {
		t.Fatalf("--raw: %v\n got %q\nwant %q", err, out, want)
	}
	// Alignment with wide characters and quoted names.
	out, _, err = runQuery(t, "", "--backup-dir", dir, `SELECT "wide 名前", k FROM shop."Odd Name"`)
	if want := " wide 名前 | k\n-----------+---\n 名前      | x\n(1 row)\n"; err != nil || out != want {
		t.Fatalf("wide: %v\n got %q\nwant %q", err, out, want)
	}
}

func TestQueryRefusesAndFails(t *testing.T) {
	dir := queryFixture(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--backup-dir", dir, "COPY (SELECT 1) TO 'x.csv'"}, "only read-only statements"},
		{[]string{"--backup-dir", dir, "SELECT * FROM shop.nothing"}, "nothing"},
		{[]string{"--backup-dir", dir, "--format", "xml", "SELECT 1"}, "--format"},
		{[]string{"--backup-dir", dir, "--snapshot", "20200101T000000Z", "SELECT 1"}, "20200101T000000Z"},
		{[]string{"--backup-dir", filepath.Join(dir, "none"), "SELECT 1"}, "no published snapshot"},
		{[]string{"--backup-dir", dir, " -- nothing\n"}, "no SQL statement"},
		{[]string{"--backup-dir", dir, "--tail", "SELECT 1"}, "--index-dsn"},
		{[]string{"--backup-dir", dir, "--tail", "--snapshot", "20200101T000000Z", "SELECT 1"}, "not with --snapshot"},
		{[]string{"--backup-dir", dir, "--tail-max-events", "0", "SELECT 1"}, "--tail-max-events"},
	} {
		_, _, err := runQuery(t, "", c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error with %q", c.args, err, c.want)
		}
	}
	// Several statements, the last without ';'; without an index the
	// snapshot alone, said on standard error.
	out, errOut, err := runQuery(t, "", "--backup-dir", dir, "--format", "csv", "SELECT 1 AS a; SELECT 'x;y' AS b -- done")
	if err != nil || out != "a\n1\nb\nx;y\n" {
		t.Fatalf("two statements: %v\n%q", err, out)
	}
	if !strings.HasPrefix(errOut, "cut: snapshot ") || !strings.Contains(errOut, "the snapshot alone: no tail") {
		t.Fatalf("the cut line: %q", errOut)
	}
}

func TestQueryShell(t *testing.T) {
	dir := queryFixture(t)
	script := `.tables
.schema orders
SELECT count(*) AS n
  FROM shop.orders; SELECT 'a;'
  AS s;
.format csv
-- a comment alone is no statement
SELECT sum(total) AS total FROM shop.orders;
DROP VIEW shop.orders;
.nope
SELECT 1 AS last`
	out, errOut, err := runQuery(t, script, "--backup-dir", dir)
	if err == nil || !strings.Contains(err.Error(), "a statement failed") {
		t.Fatalf("a script with failing statements: %v", err)
	}
	want := `shop."Odd Name"
shop.orders
shop.orders
  id       BIGINT
  total    DECIMAL(12,2)
  status   VARCHAR
  placed   TIMESTAMP
  note     VARCHAR
  shipped  DATE
  took     INTERVAL
 n
---
 3
(1 row)
 s
----
 a;
(1 row)
total
59.25
last
1
`
	if out != want {
		t.Errorf("shell output:\n got:\n%s\nwant:\n%s", out, want)
	}
	for _, e := range []string{"Error: only read-only statements", "Error: unknown command .nope"} {
		if !strings.Contains(errOut, e) {
			t.Errorf("error output lacks %q:\n%s", e, errOut)
		}
	}
	out, _, err = runQuery(t, "SELECT 2 AS two;\n.quit\nSELECT 3;\n", "--backup-dir", dir, "--format", "csv")
	if err != nil || out != "two\n2\n" {
		t.Fatalf(".quit: %v\n%q", err, out)
	}
}

// TestQueryValueTypes: values of DuckDB types the views do not produce
// (a user's expressions) print as DuckDB prints them.
func TestQueryValueTypes(t *testing.T) {
	dir := queryFixture(t)
	const q = `SELECT true AS b, 170141183460469231731687303715884105727::HUGEINT AS h, [1, 2] AS l,
  {'a': 1, 'b': 'x'} AS s, MAP {'k': 'v'} AS m, '\x00ab\x5C'::BLOB AS bl, TIME '01:02:03.5' AS tm,
  TIMESTAMPTZ '2026-01-01 00:00:00+00' AS tz, '123e4567-e89b-12d3-a456-426614174000'::UUID AS u,
  'nan'::DOUBLE AS nan, INTERVAL '1 month 2 days 3 hours' AS iv, 1.5::FLOAT AS f, '<&>' AS html`
	out, _, err := runQuery(t, "", "--backup-dir", dir, "--format", "csv", q)
	want := `b,h,l,s,m,bl,tm,tz,u,nan,iv,f,html
true,170141183460469231731687303715884105727,"[1, 2]","{'a': 1, 'b': 'x'}",{'k'='v'},\x00ab\x5C,01:02:03.5,2026-01-01 00:00:00+00,123e4567-e89b-12d3-a456-426614174000,nan,1 month 2 days 03:00:00,1.5,<&>
`
	if err != nil || out != want {
		t.Fatalf("csv: %v\n got %q\nwant %q", err, out, want)
	}
	out, _, err = runQuery(t, "", "--backup-dir", dir, "--format", "json", q)
	want = `[
{"b":true,"h":170141183460469231731687303715884105727,"l":[1,2],"s":{"a":1,"b":"x"},"m":"{'k'='v'}","bl":"\\x00ab\\x5C","tm":"01:02:03.5","tz":"2026-01-01 00:00:00+00","u":"123e4567-e89b-12d3-a456-426614174000","nan":"nan","iv":"1 month 2 days 03:00:00","f":1.5,"html":"<&>"}
]
`
	if err != nil || out != want {
		t.Fatalf("json: %v\n got %q\nwant %q", err, out, want)
	}
}

// TestQuerySandboxed: `dbtrail query` reads the source's backup folder
// only by default (a file elsewhere is refused, as in the API), and
// --no-sandbox lets a person read it; a function that changes settings is
// refused either way.
func TestQuerySandboxed(t *testing.T) {
	dir := queryFixture(t)
	other := filepath.Join(t.TempDir(), "other.csv")
	if err := os.WriteFile(other, []byte("a\n42\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	q := "SELECT * FROM read_csv('" + other + "')"
	if out, _, err := runQuery(t, "", "--backup-dir", dir, "--format", "csv", q); err == nil {
		t.Fatalf("a file outside the backup folder answered: %q", out)
	}
	if out, _, err := runQuery(t, "", "--backup-dir", dir, "--format", "csv", "SELECT content FROM read_text('/etc/hostname')"); err == nil {
		t.Fatalf("/etc/hostname answered: %q", out)
	}
	out, _, err := runQuery(t, "", "--backup-dir", dir, "--format", "csv", "--no-sandbox", q)
	if err != nil || out != "a\n42\n" {
		t.Fatalf("--no-sandbox: %q, %v", out, err)
	}
	if _, _, err := runQuery(t, "", "--backup-dir", dir, "--no-sandbox", "SELECT enable_logging()"); err == nil || !strings.Contains(err.Error(), "enable_logging") {
		t.Fatalf("enable_logging with --no-sandbox: %v, want it refused by name", err)
	}
}
