package foldplan

import (
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// A plan depends on its input only: the same input gives the same plan, and
// neither map iteration order nor the order of the input's lists leaks.
func TestDeterministic(t *testing.T) {
	build := func(seed int64) Input {
		f := newFx()
		var keys []TableKey
		for _, s := range []string{"z", "a", "m"} {
			for _, n := range []string{"t9", "t1", "t5", "t3"} {
				keys = append(keys, TableKey{s, n})
			}
		}
		size := map[TableKey]int{}
		for i, k := range keys {
			size[k] = i + 5 // up to 16 entries: some compact
		}
		r := rand.New(rand.NewSource(seed))
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		for _, k := range keys {
			f.add(k, plain(0, size[k]-1)...)
			if size[k]%2 == 0 {
				f.in.Changes[k] = int64(size[k])
			}
		}
		f.in.Compacted[TableKey{"a", "t1"}] = compactedFor(f, TableKey{"a", "t1"}, 0, 1)
		f.in.Schemas = []change.SchemaVersion{
			version(TableKey{"m", "t5"}, 150, pos("binlog.000010", 5000), "TRUNCATE t5", stdDef(TableKey{"m", "t5"})),
			version(TableKey{"m", "t5"}, 120, pos("binlog.000010", 3000), "ALTER TABLE t5 ENGINE=InnoDB", stdDef(TableKey{"m", "t5"})),
			version(TableKey{"a", "t3"}, 150, pos("binlog.000010", 5000), "DROP TABLE t3", nil),
		}
		delete(f.in.Current, TableKey{"a", "t3"})
		f.in.Current[TableKey{"b", "new"}] = stdDef(TableKey{"b", "new"})
		f.in.Current[TableKey{"a", "new"}] = stdDef(TableKey{"a", "new"})
		f.in.Gaps = []change.Gap{{ID: 3, FromFile: "binlog.000010", FromPos: 4000, ToFile: "binlog.000010", ToPos: 4500, Reason: "purged"},
			{ID: 1, FromFile: "binlog.000010", FromPos: 2000, ToFile: "binlog.000010", ToPos: 2500, Reason: "purged"}}
		r.Shuffle(len(f.in.Schemas), func(i, j int) { f.in.Schemas[i], f.in.Schemas[j] = f.in.Schemas[j], f.in.Schemas[i] })
		r.Shuffle(len(f.in.Gaps), func(i, j int) { f.in.Gaps[i], f.in.Gaps[j] = f.in.Gaps[j], f.in.Gaps[i] })
		return f.in
	}
	in := build(1)
	want := Make(in)
	if !want.Refused || len(want.Reasons) != 3 || len(want.Tables) != 14 { // 2 gaps, a dropped table
		t.Fatalf("%q", want.Reasons)
	}
	if !slices.IsSortedFunc(want.Tables, func(a, b TablePlan) int { return cmpKey(a.Key, b.Key) }) {
		t.Fatal("tables not sorted")
	}
	for i := range 50 {
		if got := Make(in); !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d differs:\n%+v\n%+v", i, got, want)
		}
		if got := Make(build(int64(i + 2))); !reflect.DeepEqual(got, want) {
			t.Fatalf("shuffled input %d differs:\n%+v\n%+v", i, got, want)
		}
	}
	// Without the refusals and gaps the same tables link, pair and compact.
	in = build(1)
	in.Schemas, in.Gaps = nil, nil
	in.Current[TableKey{"a", "t3"}] = stdDef(TableKey{"a", "t3"})
	delete(in.Current, TableKey{"a", "new"})
	delete(in.Current, TableKey{"b", "new"})
	p := Make(in)
	if p.Refused || len(p.Compact) == 0 || !slices.IsSortedFunc(p.Compact, func(a, b CompactJob) int { return cmpKey(a.Key, b.Key) }) {
		t.Fatalf("%+v", p)
	}
	for _, tp := range p.Tables {
		if tp.Action != ActionLink && tp.Action != ActionPair || (tp.Kind != snapshot.KindDelta) {
			t.Fatalf("%+v", tp)
		}
	}
}
