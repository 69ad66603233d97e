package views

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestQuoting(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{quoteIdent(`we"ird`), `"we""ird"`},
		{quoteIdent("sp ace"), `"sp ace"`},
		{quoteString(`/a/it's`), `'/a/it''s'`},
		{globEscape(`a*b?c[d]e`), `a[*]b[?]c[[]d]e`},
		{globEscape("plain.name"), "plain.name"},
		{comment("a\nDROP x;\r"), "a DROP x; "},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}

func TestGenerateRefuses(t *testing.T) {
	cols := []string{"id"}
	for name, c := range map[string]struct {
		dir    string
		tables []TableRef
		want   string
	}{
		"no columns":     {"/b/main", []TableRef{{Schema: "s", Table: "t"}}, "no columns"},
		"slash in table": {"/b/main", []TableRef{{Schema: "s", Table: "a/b", Columns: cols}}, "cannot be a file name"},
		"dot schema":     {"/b/main", []TableRef{{Schema: "..", Table: "t", Columns: cols}}, "cannot be a file name"},
		"empty column":   {"/b/main", []TableRef{{Schema: "s", Table: "t", Columns: []string{""}}}, "bad column name"},
		"backslash dir":  {`/b\x/main`, []TableRef{{Schema: "s", Table: "t", Columns: cols}}, "backslash"},
	} {
		err := Generate(io.Discard, c.dir, c.tables)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", name, err, c.want)
		}
	}
}

func TestGenerateShape(t *testing.T) {
	var b strings.Builder
	tables := []TableRef{
		{Schema: "s", Table: "a", Columns: []string{"id", `x"y`}},
		{Schema: "s", Table: "b", Columns: []string{"id", "File_Row_Number"}},
	}
	if err := Generate(&b, "/backup/main", tables); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		`CREATE SCHEMA IF NOT EXISTS "s";`,
		`CREATE OR REPLACE VIEW "s"."a" AS`,
		`SELECT "id", "x""y" FROM read_parquet('/backup/main/current/s/a.parquet', file_row_number = true)`,
		`read_parquet('/backup/main/current/s/a.[0-9]*.posdel', filename = true, union_by_name = true)`,
		`read_parquet('/backup/main/current/s/a.[0-9]*.upserts', filename = true, union_by_name = true)`,
		// A reserved column name: the table file alone.
		`CREATE OR REPLACE VIEW "s"."b" AS
SELECT "id", "File_Row_Number" FROM read_parquet('/backup/main/current/s/b.parquet');`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("views.sql lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "CREATE SCHEMA"); n != 1 {
		t.Errorf("%d CREATE SCHEMA, want 1", n)
	}
	if strings.Contains(out, "b.[0-9]*") {
		t.Errorf("table with a reserved column reads a chain:\n%s", out)
	}
}

func TestTablesFromSnapshotNeedsChainStart(t *testing.T) {
	db := openTestDB(t)
	dir := t.TempDir()
	s := snap{t, db, dir}
	s.put("s/ok.parquet", values("id", "1"))
	s.chainStart("s", "ok", "id", "SELECT 0::INT AS id WHERE false")
	s.put("s/full.parquet", values("id, bintrail_op", "1,'x'"))
	if _, err := TablesFromSnapshot(dir); err != nil {
		t.Fatalf("chain start present: %v", err)
	}

	// Only the posdel half, or a chain not starting at 000000.
	s.put("s/half.parquet", values("id", "1"))
	s.posdel("s", "half", "000000")
	s.upserts("s", "half", "000001", "id", "SELECT 0::INT AS id WHERE false")
	_, err := TablesFromSnapshot(dir)
	if err == nil || !strings.Contains(err.Error(), `"s"."half" has no chain start`) {
		t.Fatalf("got %v, want a no chain start error for s.half", err)
	}
	if err := os.Remove(filepath.Join(dir, "s", "half.000000.posdel")); err != nil {
		t.Fatal(err)
	}
	// A compacted range from 000000 is a chain start.
	s.posdel("s", "half", "000000-000014")
	s.upserts("s", "half", "000000-000014", "id", "SELECT 0::INT AS id WHERE false")
	refs, err := TablesFromSnapshot(dir)
	if err != nil {
		t.Fatalf("range chain start: %v", err)
	}
	if len(refs) != 3 {
		t.Fatalf("got %d tables, want 3: %v", len(refs), refs)
	}

	if _, err := TablesFromSnapshot(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("missing snapshot folder: no error")
	}
}
