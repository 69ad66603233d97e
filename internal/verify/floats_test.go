package verify

import (
	"testing"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

func explainTable(t *testing.T, ddl string) *schema.Table {
	t.Helper()
	cat := schema.NewCatalog()
	if _, err := schema.ApplyDDL(cat, "app", ddl); err != nil {
		t.Fatal(err)
	}
	def, ok := cat.Get("app", "t")
	if !ok {
		t.Fatal("no table")
	}
	return def
}

// TestFloatCause: rows whose FLOAT values differ only by the dump's
// rounding to 6 significant digits are paired (also in a table keyed by the
// whole row) and explained, naming the columns; other differences are not.
func TestFloatCause(t *testing.T) {
	for _, ddl := range []string{
		"CREATE TABLE t (id INT PRIMARY KEY, f FLOAT, g FLOAT, s VARCHAR(5))",
		"CREATE TABLE t (id INT, f FLOAT, g FLOAT, s VARCHAR(5))",
	} {
		def := explainTable(t, ddl)
		keys := map[string]*tally{}
		live, snap := newHasher(def, keys, true), newHasher(def, keys, false)
		add := func(h *hasher, row ...string) {
			t.Helper()
			vals := make([][]byte, len(row))
			for i, v := range row {
				if v != "NULL" {
					vals[i] = []byte(v)
				}
			}
			if err := h.add(rowimage.RawCells(nil, vals)); err != nil {
				t.Fatal(err)
			}
		}
		add(live, "1", "3.1415927410125732", "0.5", "a") // f rounded by the dump
		add(snap, "1", "3.14159", "0.5", "a")
		add(live, "2", "1.2345678", "2.7182817", "b") // both rounded
		add(snap, "2", "1.23457", "2.71828", "b")
		add(live, "3", "1.2345678", "NULL", "c") // another value
		add(snap, "3", "1.23456", "NULL", "c")
		add(live, "4", "1.2345678", "1", "d") // another string
		add(snap, "4", "1.23457", "1", "x")
		add(live, "5", "0.1", "NULL", "e") // equal
		add(snap, "5", "0.1", "NULL", "e")
		d, n := diffs(keys, 10)
		floatCauses(def, keys, d)
		causes := map[string]string{}
		for _, k := range d {
			causes[k.Key[:2]] += k.Cause + ";"
		}
		want := map[string]string{
			"[1": "FLOAT column f: " + FloatCause + ";",
			"[2": "FLOAT column f, g: " + FloatCause + ";",
		}
		for k, c := range want {
			if causes[k] != c {
				t.Errorf("%s: key %s cause %q, want %q (diffs %v)", ddl, k, causes[k], c, d)
			}
		}
		for k, c := range causes {
			if want[k] == "" && c != ";" && c != ";;" {
				t.Errorf("%s: key %s explained as %q", ddl, k, c)
			}
		}
		if n < 4 {
			t.Errorf("%s: %d differing keys: %v", ddl, n, d)
		}
	}
}
