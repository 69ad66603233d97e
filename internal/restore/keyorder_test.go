package restore

import (
	"slices"
	"testing"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

func TestKeyOrder(t *testing.T) {
	def := &schema.Table{Name: "t", Columns: []schema.Column{{Name: "k", Type: "varchar"}, {Name: "n", Type: "bigint"},
		{Name: "d", Type: "decimal", Scale: 2}, {Name: "f", Type: "double"}, {Name: "pad", Type: "text"}},
		Key: []string{"k", "n"}, KeyKind: schema.KeyPrimary}
	o, err := NewKeyOrder(def)
	if err != nil || o == nil {
		t.Fatalf("NewKeyOrder: %v %v", o, err)
	}
	row := func(k, n string) []rowimage.Cell {
		return []rowimage.Cell{rowimage.TextCell([]byte(k)), rowimage.TextCell([]byte(n)), rowimage.NullCell(), rowimage.NullCell(), rowimage.TextCell([]byte("x"))}
	}
	rows := [][]rowimage.Cell{row("b", "10"), row("a", "9"), row("b", "-3"), row("b", "2"), row("a", "-10"), row("b", "-20")}
	slices.SortFunc(rows, o.Compare)
	var got []string
	for _, r := range rows {
		got = append(got, string(r[0].Text)+":"+string(r[1].Text))
	}
	want := []string{"a:-10", "a:9", "b:-20", "b:-3", "b:2", "b:10"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	for _, c := range []struct {
		a, b string
		want int
	}{{"1.50", "1.5", 0}, {"-1.50", "-1.49", -1}, {"10.00", "9.99", 1}, {"0.01", "-0.01", 1}, {"007", "7", 0}} {
		if got := compareNumber([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("compareNumber(%s, %s) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	if compareCell(cmpFloat, rowimage.TextCell([]byte("1e2")), rowimage.TextCell([]byte("99.5"))) != 1 {
		t.Error("1e2 should follow 99.5")
	}
	if compareCell(cmpInt, rowimage.NullCell(), rowimage.TextCell([]byte("-5"))) != -1 {
		t.Error("NULL should sort first")
	}
	if k, _ := NewKeyOrder(&schema.Table{Columns: def.Columns, Key: []string{"k", "n", "d", "f", "pad"}, KeyKind: schema.KeyRow}); k != nil {
		t.Error("a keyless table has no key order")
	}
}

// TestKeyText round-trips keys through Text and Parse, bytes that are
// not UTF-8 and NULL included, and refuses a key of the wrong shape.
func TestKeyText(t *testing.T) {
	tbl := &schema.Table{Name: "t", KeyKind: schema.KeyPrimary, Key: []string{"b", "a"}, Columns: []schema.Column{
		{Name: "a", Type: "int"}, {Name: "x", Type: "text"}, {Name: "b", Type: "varbinary"}}}
	o, err := NewKeyOrder(tbl)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range [][]rowimage.Cell{
		{rowimage.TextCell([]byte("-5")), rowimage.TextCell([]byte("x")), rowimage.TextCell([]byte{0xff, 0, '"', '<'})},
		{rowimage.TextCell([]byte("7")), rowimage.NullCell(), rowimage.NullCell()},
		{rowimage.TextCell([]byte("0")), rowimage.NullCell(), rowimage.TextCell([]byte(`é"\`))},
	} {
		text := o.Text(row)
		got, err := o.Parse(text, len(row))
		if err != nil {
			t.Fatalf("parse %s: %v", text, err)
		}
		if o.Compare(got, row) != 0 || got[2].Null != row[2].Null || string(got[2].Text) != string(row[2].Text) {
			t.Errorf("%s parsed to %v, want the key of %v", text, got, row)
		}
	}
	for _, bad := range []string{`["1"]`, `[1, "2"]`, `not json`, `[{"hex":"00"}, "1"]`} {
		if _, err := o.Parse(bad, 3); err == nil {
			t.Errorf("Parse(%s) accepted", bad)
		}
	}
}
