package moment

import (
	"context"
	"slices"
	"testing"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
)

func TestParseKey(t *testing.T) {
	one := &schema.Table{Schema: "s", Name: "t", Key: []string{"id"}, KeyKind: schema.KeyPrimary,
		Columns: []schema.Column{{Name: "id", Type: "bigint"}, {Name: "v", Type: "varchar", Charset: "utf8mb4", Length: 9}}}
	two := &schema.Table{Schema: "s", Name: "c", Key: []string{"a", "b", "at"}, KeyKind: schema.KeyPrimary,
		Columns: []schema.Column{{Name: "a", Type: "int"}, {Name: "b", Type: "varchar", Charset: "utf8mb4", Length: 9},
			{Name: "at", Type: "datetime", FSP: 3}, {Name: "bin", Type: "varbinary", Charset: "binary", Length: 4}}}
	bin := &schema.Table{Schema: "s", Name: "b", Key: []string{"bin"}, KeyKind: schema.KeyPrimary, Columns: two.Columns[3:]}
	for _, c := range []struct {
		t    *schema.Table
		in   string
		want string
	}{
		{one, "42", "[42]"},
		{one, "[42]", "[42]"},
		{one, `["-7"]`, "[-7]"},
		{two, `[7,"a\"b","2026-11-29 08:00:00"]`, `[7,"a\"b","2026-11-29 08:00:00.000"]`},
		{bin, "0x00ff", `["AP8="]`},
	} {
		got, err := ParseKey(c.t, c.in)
		if err != nil || got != c.want {
			t.Errorf("%s %q: %q %v, want %q", c.t.Name, c.in, got, err, c.want)
		}
	}
	for _, c := range []struct {
		t  *schema.Table
		in string
	}{
		{one, "abc"}, {one, "[1,2]"}, {one, "[null]"}, {one, "[{}]"}, {two, "7"}, {two, `[7,"x"]`}, {two, `[7,"x","yesterday"]`},
		{one, "99999999999999999999"}, {bin, "0xzz"}, {one, "[1"},
	} {
		if _, err := ParseKey(c.t, c.in); err == nil {
			t.Errorf("%s %q: no error", c.t.Name, c.in)
		} else if _, ok := err.(*KeyError); !ok {
			t.Errorf("%s %q: %T %v, want a *KeyError", c.t.Name, c.in, err, err)
		}
	}
}

func TestRowHistory(t *testing.T) {
	e := func(seq uint64, op change.Op, pk, before string) change.Event {
		return change.Event{Seq: seq, Schema: "a", Table: "t", Op: op, PK: pk, PKBefore: before}
	}
	// Row [1] is inserted, updated, moved to [2], updated, moved to [3];
	// another row takes key [1] later. Row [9] was moved to [1] before it
	// all and deleted... no: [9] moved to [1] at 2 (so [1]'s earlier life
	// was [9]'s).
	l := listEvents{
		e(1, change.OpInsert, "[9]", ""),
		e(2, change.OpUpdate, "[1]", "[9]"),
		e(3, change.OpUpdate, "[1]", ""),
		e(4, change.OpInsert, "[5]", ""),
		e(5, change.OpUpdate, "[2]", "[1]"),
		e(6, change.OpUpdate, "[2]", ""),
		e(7, change.OpUpdate, "[3]", "[2]"),
		e(8, change.OpInsert, "[2]", ""), // a new row under [2]
		e(9, change.OpDelete, "[3]", ""),
		e(10, change.OpInsert, "[1]", ""), // key [1] again
	}
	hist := func(key string) []uint64 {
		var got []uint64
		if err := RowHistory(context.Background(), l, "main", "a", "t", key, func(ev change.Event) error {
			got = append(got, ev.Seq)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := hist("[1]"); !slices.Equal(got, []uint64{1, 2, 3, 5, 6, 7, 9, 10}) {
		t.Fatalf("[1]: %v", got)
	}
	if got := hist("[3]"); !slices.Equal(got, []uint64{1, 2, 3, 5, 6, 7, 9}) {
		t.Fatalf("[3]: %v", got)
	}
	if got := hist("[5]"); !slices.Equal(got, []uint64{4}) {
		t.Fatalf("[5]: %v", got)
	}
}
