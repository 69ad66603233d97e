package exactfloat

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Pairs MariaDB 10.11 printed: SELECT f (what mydumper dumps) and
// CAST(f AS DOUBLE) (the stored float32).
var printed = []struct{ dumped, exact string }{
	{"3.14159", "3.1415927410125732"},
	{"0.1", "0.10000000149011612"},
	{"16777200", "16777216"},
	{"1.17549e-38", "1.1754943508222875e-38"},
	{"3.4e38", "3.3999999521443642e38"},
	{"1234570", "1234567"},
	{"-0.0000001", "-0.00000010000000116860974"},
	{"100000000", "100000000"},
	{"0.000123457", "0.00012345678987912834"},
	{"123457", "123456.7890625"},
	{"1.4013e-45", "1.401298464324817e-45"},
	{"0.00001", "0.000009999999747378752"},
	{"1e15", "999999986991104"},
	{"1234567.125", "1234567.125"}, // FLOAT(10,3): printed with its decimals
	{"-1.5000", "-1.5"},
	{"0", "0"},
}

func TestRoundsWhatTheServerPrints(t *testing.T) {
	for _, p := range printed {
		x, err := ParseExact([]byte(p.exact))
		if err != nil {
			t.Fatal(err)
		}
		if float64(x) != mustFloat(t, p.exact) {
			t.Errorf("%s: parsed as %v, not exactly", p.exact, x)
		}
		if !Rounds([]byte(p.dumped), x) {
			t.Errorf("%s does not round to %s", p.exact, p.dumped)
		}
		want := mustFloat(t, p.dumped) != float64(x) && float32(mustFloat(t, p.dumped)) != x
		if got := NeedsFix(x); got != want && p.dumped != "1234567.125" {
			t.Errorf("NeedsFix(%s) = %v, want %v", p.exact, got, want)
		}
		if back, err := ParseExact(AppendExact(nil, x)); err != nil || back != x {
			t.Errorf("AppendExact(%v) reads back as %v (%v)", x, back, err)
		}
	}
	for _, bad := range []struct{ dumped, exact string }{
		{"3.14158", "3.1415927410125732"},
		{"-3.14159", "3.1415927410125732"},
		{"1234560", "1234567"},
		{"x", "1"},
		{"2e15", "999999986991104"},
	} {
		x, _ := ParseExact([]byte(bad.exact))
		if Rounds([]byte(bad.dumped), x) {
			t.Errorf("%s rounds to %s", bad.exact, bad.dumped)
		}
	}
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func f32(v float32) *float32 { return &v }

// TestWriterMergesRunsAndOverrides: records spilled in several runs and
// held in memory merge into one sorted file; overrides replace or remove
// a key's record whichever run holds it; rows that need no fix are absent.
func TestWriterMergesRunsAndOverrides(t *testing.T) {
	dir := t.TempDir()
	w := NewWriter(dir, 2)
	w.runMax = 50
	exact := func(i int) float32 { return float32(i) + 0.1234567 } // needs 8 digits
	for i := 0; i < 1000; i++ {
		vals := []*float32{f32(exact(i)), nil}
		if i%3 == 0 {
			vals[0] = f32(float32(i)) // exact in 6 digits: no record
		}
		if err := w.Add([]byte(fmt.Sprintf("[%d]", i)), vals); err != nil {
			t.Fatal(err)
		}
	}
	if len(w.runs) < 10 {
		t.Fatalf("%d runs", len(w.runs))
	}
	must(t, w.Override([]byte("[1]"), nil, false))                           // gone at the dump
	must(t, w.Override([]byte("[2]"), []*float32{f32(7.654321), nil}, true)) // changed since
	must(t, w.Override([]byte("[4]"), []*float32{f32(4), f32(0.5)}, true))   // exact in the dump
	must(t, w.Override([]byte("[5000]"), []*float32{nil, f32(1.0000001)}, true))
	path := filepath.Join(dir, "fix")
	n, err := w.Finish(path)
	must(t, err)
	if matches, _ := filepath.Glob(filepath.Join(dir, "run*")); len(matches) != 0 {
		t.Fatalf("runs left: %v", matches)
	}
	x, err := Open(path, 2)
	must(t, err)
	defer x.Close()
	if x.Len() != int(n) {
		t.Fatalf("Len %d, Finish wrote %d", x.Len(), n)
	}
	want := map[string][2]*float32{"[2]": {f32(7.654321), nil}, "[5000]": {nil, f32(1.0000001)}}
	for i := 0; i < 1000; i++ {
		if i%3 != 0 && i != 1 && i != 2 && i != 4 {
			want[fmt.Sprintf("[%d]", i)] = [2]*float32{f32(exact(i)), nil}
		}
	}
	if int(n) != len(want) {
		t.Fatalf("%d records, want %d", n, len(want))
	}
	var bits []uint32
	for i := -5; i < 5005; i++ {
		key := fmt.Sprintf("[%d]", i)
		var ok bool
		bits, ok, err = x.Find(bits, []byte(key))
		must(t, err)
		w, exp := want[key]
		if ok != exp {
			t.Fatalf("%s: found %v, want %v", key, ok, exp)
		}
		for k := 0; ok && k < 2; k++ {
			switch {
			case w[k] == nil && !Keep(bits[k]):
				t.Fatalf("%s value %d: %v, want the dumped value kept", key, k, math.Float32frombits(bits[k]))
			case w[k] != nil && math.Float32frombits(bits[k]) != *w[k]:
				t.Fatalf("%s value %d: %v, want %v", key, k, math.Float32frombits(bits[k]), *w[k])
			}
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type rows [][][]byte

func (r *rows) AppendSQL(row []rowimage.Cell) error {
	cp := make([][]byte, len(row))
	for i, v := range row {
		if !v.Null {
			cp[i] = append([]byte{}, v.Text...)
		}
	}
	*r = append(*r, cp)
	return nil
}

func table(t *testing.T, ddl string) *schema.Table {
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

func TestPlan(t *testing.T) {
	for ddl, want := range map[string]string{
		"CREATE TABLE t (id INT PRIMARY KEY, f FLOAT, d DOUBLE)":                "{[1] [0]}",
		"CREATE TABLE t (a INT NOT NULL, f FLOAT, g FLOAT, UNIQUE KEY (a))":     "{[1 2] [0]}",
		"CREATE TABLE t (id INT PRIMARY KEY, d DOUBLE)":                         "{[] []}",
		"CREATE TABLE t (a INT, f FLOAT)":                                       "error",
		"CREATE TABLE t (a INT NOT NULL, f FLOAT NOT NULL, PRIMARY KEY (a, f))": "error",
	} {
		p, err := NewPlan(table(t, ddl))
		var ue *UnfixableError
		got := fmt.Sprint(p)
		if errors.As(err, &ue) {
			got = "error"
		} else if err != nil {
			t.Fatal(err)
		}
		if got != want && !(want == "{[] []}" && len(p.Floats) == 0) {
			t.Errorf("%s: plan %s, want %s", ddl, got, want)
		}
	}
}

// TestSinkFixesAndRefuses: a row with a fix gets its exact values, others
// pass unchanged, and an exact value that does not round to the dumped one
// is refused with the key named.
func TestSinkFixesAndRefuses(t *testing.T) {
	def := table(t, "CREATE TABLE t (id INT PRIMARY KEY, f FLOAT, s VARCHAR(5), g FLOAT)")
	plan, err := NewPlan(def)
	must(t, err)
	dir := t.TempDir()
	w := NewWriter(dir, 2)
	must(t, w.Add([]byte("[1]"), []*float32{f32(3.1415927), f32(0.5)}))
	must(t, w.Add([]byte("[2]"), []*float32{f32(2.7182817), f32(1.2345678)}))
	_, err = w.Finish(filepath.Join(dir, "fix"))
	must(t, err)
	x, err := Open(filepath.Join(dir, "fix"), 2)
	must(t, err)
	defer x.Close()
	var got rows
	s := NewSink(def, plan, x, &got)
	must(t, s.AppendSQL(rowimage.RawCells(nil, [][]byte{[]byte("1"), []byte("3.14159"), []byte("a"), []byte("0.5")})))
	must(t, s.AppendSQL(rowimage.RawCells(nil, [][]byte{[]byte("3"), []byte("1.23457"), nil, nil})))
	if s.Fixed() != 1 || len(got) != 2 {
		t.Fatalf("fixed %d, rows %d", s.Fixed(), len(got))
	}
	if f := string(got[0][1]); f != "3.1415927410125732" || string(got[0][3]) != "0.5" || string(got[0][2]) != "a" {
		t.Fatalf("row 1: %q", got[0])
	}
	if string(got[1][1]) != "1.23457" {
		t.Fatalf("row 3: %q", got[1])
	}
	err = s.AppendSQL(rowimage.RawCells(nil, [][]byte{[]byte("2"), []byte("2.71828"), nil, []byte("1.23456")}))
	var re *snapshot.RowError
	if !errors.As(err, &re) || re.Column != "g" || re.Row != 3 {
		t.Fatalf("want a RowError for column g of row 3, got %v", err)
	}
	t.Log(err)
}
