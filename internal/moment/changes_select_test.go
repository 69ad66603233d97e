package moment

import (
	"errors"
	"slices"
	"testing"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
)

func TestSelectChanges(t *testing.T) {
	def := &schema.Table{}
	hist := []change.SchemaVersion{
		{Schema: "app", Table: "a", Seq: 1, Definition: def},
		{Schema: "app", Table: "b", Seq: 2, Definition: def},
		{Schema: "app", Table: "late", Seq: 50, Definition: def}, // after the range
		{Schema: "shop", Table: "o", Seq: 3, Definition: def},
		{Schema: "mysql", Table: "user", Seq: 1, Definition: def},
	}
	counts := map[TableKey]int64{{"app", "a"}: 4, {"app", "b"}: 0, {"shop", "o"}: 2, {"mysql", "user"}: 9}
	names := func(ts []ChangesTable) []string {
		var out []string
		for _, c := range ts {
			s := c.Key.String()
			if c.Named {
				s += "*"
			}
			out = append(out, s)
		}
		return out
	}
	cases := []struct {
		name string
		sel  Selection
		want []string
		err  error
	}{
		{"everything with changes, no system schema", Selection{}, []string{"app.a", "shop.o"}, nil},
		{"a schema", Selection{Schemas: []string{"shop"}}, []string{"shop.o"}, nil},
		{"a named table without changes is written", Selection{Tables: []string{"app.b"}}, []string{"app.b*"}, nil},
		{"named and schema", Selection{Schemas: []string{"shop"}, Tables: []string{"app.a"}}, []string{"app.a*", "shop.o"}, nil},
		{"a table defined after the range", Selection{Tables: []string{"app.late"}}, nil, ErrUnknownTable},
		{"a name without schema", Selection{Tables: []string{"a"}}, nil, ErrUnknownTable},
		{"an unknown schema", Selection{Schemas: []string{"nope"}}, nil, ErrUnknownSchema},
		{"a system schema", Selection{Schemas: []string{"mysql"}}, nil, ErrUnknownSchema},
	}
	for _, c := range cases {
		got, err := SelectChanges(hist, 10, c.sel, counts)
		if !errors.Is(err, c.err) || (c.err == nil && !slices.Equal(names(got), c.want)) {
			t.Errorf("%s: %v, %v; want %v, %v", c.name, names(got), err, c.want, c.err)
		}
	}
	got, _ := SelectChanges(hist, 10, Selection{Tables: []string{"app.a"}}, counts)
	if len(got) != 1 || got[0].Changes != 4 {
		t.Errorf("named table with changes: %+v", got)
	}
}
