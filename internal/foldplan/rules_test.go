package foldplan

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

func TestNoPreviousSnapshot(t *testing.T) {
	p := Make(Input{Cut: 5})
	if !p.Refused || !slices.Equal(p.Reasons, []string{"no previous snapshot: take a full backup"}) || p.Tables != nil || p.Cut != 5 {
		t.Fatalf("%+v", p)
	}
}

func TestCutBeforePrevious(t *testing.T) {
	f := newFx().add(kA, plain(0, 0)...)
	f.in.Cut = 99
	p := f.plan(t)
	if !p.Refused || len(p.Reasons) != 1 || !strings.Contains(p.Reasons[0], "cut seq 99 is before the previous snapshot") {
		t.Fatalf("%+v", p)
	}
}

func TestZeroChangesLinksTheSameChain(t *testing.T) {
	f := newFx().add(kA, plain(0, 2)...)
	f.in.Now = t0.Add(30 * 24 * time.Hour) // age and size do not matter without changes
	f.in.TableDeltas = false
	f.sizes(kA, 1, 100<<20)
	p := f.plan(t)
	tp := expect(t, p, kA, ActionLink, "link: no changes in the window: the table file and 3 chain entries are linked forward")
	prev := f.in.Prev.Tables[0]
	if p.Refused || !slices.Equal(tp.Chain, prev.Chain) || tp.Kind != snapshot.KindDelta || tp.Next != 0 || tp.NeedsCompaction {
		t.Fatalf("%+v", tp)
	}
	if len(tp.Links) != 7 || tp.Links[0].Dst != prev.File || tp.Links[0].Src != prev.File || tp.Links[0].Digest != f.in.Prev.Files[prev.File] {
		t.Fatalf("links %+v", tp.Links)
	}
	for i, l := range tp.Links[1:] {
		if l.Dst != prev.Chain[i] || l.Src != prev.Chain[i] || l.FromCompact || l.Digest != f.in.Prev.Files[l.Src] {
			t.Fatalf("link %d: %+v", i, l)
		}
	}
}

func TestChangesWriteAPair(t *testing.T) {
	f := newFx().add(kA, plain(0, 2)...)
	f.in.Changes[kA] = 42
	p := f.plan(t)
	tp := expect(t, p, kA, ActionPair, "pair: 42 rows changed: new pair 000003 after 3 chain entries (chain 6.0 KiB, table file 10.0 MiB, chain started 2h0m0s ago)")
	if tp.Next != 3 || !slices.Equal(tp.Chain, f.in.Prev.Tables[0].Chain) || tp.Kind != snapshot.KindDelta || tp.Changes != 42 || len(tp.Links) != 7 {
		t.Fatalf("%+v", tp)
	}
}

func TestChainSize(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name         string
		table, chain int64
		rewrite      bool
	}{
		{"exactly 1 MiB is left alone", 1 * mib, 1 * mib, false},
		{"1 MiB + 1 byte, more than a quarter", 1 * mib, mib + 1, true},
		{"1 MiB + 1 byte, exactly a quarter", 4*mib + 4, mib + 1, false},
		{"1 MiB + 1 byte, a quarter and a bit", 4*mib + 3, mib + 1, true},
		{"exactly a quarter", 8 * mib, 2 * mib, false},
		{"a byte more than a quarter", 8*mib - 1, 2 * mib, true},
		{"small against a big table", 100 * mib, 20 * mib, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFx().add(kA, plain(0, 4)...).sizes(kA, tc.table, tc.chain)
			f.in.Changes[kA] = 1
			p := f.plan(t)
			if !tc.rewrite {
				expect(t, p, kA, ActionPair)
				return
			}
			expect(t, p, kA, ActionRewrite, "rewrite: the chain is "+HumanBytes(tc.chain)+", more than a quarter of the "+HumanBytes(tc.table)+" table file")
		})
	}
	f := newFx().add(kA, plain(0, 4)...).sizes(kA, 10*mib, 3355443)
	f.in.Changes[kA] = 1
	expect(t, f.plan(t), kA, ActionRewrite, "rewrite: the chain is 3.2 MiB, more than a quarter of the 10.0 MiB table file")
}

func TestChainAge(t *testing.T) {
	for _, tc := range []struct {
		name    string
		age     time.Duration
		max     time.Duration
		rewrite bool
	}{
		{"a second short of a day", 24*time.Hour - time.Second, 0, false},
		{"exactly a day", 24 * time.Hour, 0, true},
		{"older", 25 * time.Hour, 0, true},
		{"custom limit, under", 59 * time.Minute, time.Hour, false},
		{"custom limit, at", time.Hour, time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFx().add(kA, plain(0, 1)...)
			f.in.Now, f.in.MaxChainAge, f.in.Changes[kA] = t0.Add(tc.age), tc.max, 1
			p := f.plan(t)
			if !tc.rewrite {
				expect(t, p, kA, ActionPair)
				return
			}
			tp := expect(t, p, kA, ActionRewrite, "rewrite: the chain is "+tc.age.String()+" old (started with snapshot "+startID+")")
			if tp.Kind != snapshot.KindDelta || tp.Chain != nil || tp.Links != nil || tp.Next != 0 {
				t.Fatalf("%+v", tp)
			}
		})
	}
	f := newFx().add(kA, plain(0, 1)...)
	f.in.Footers[kA] = snapshot.FooterMeta{Table: stdDef(kA), SnapshotID: "yesterday"}
	f.in.Changes[kA] = 1
	expect(t, f.plan(t), kA, ActionRewrite, `the chain's start is unknown: the table file's footer has snapshot id "yesterday"`)
}

func TestCaptureGaps(t *testing.T) {
	// The window is (binlog.000010:1000, binlog.000011:500].
	for _, tc := range []struct {
		name     string
		from, to [2]uint64 // binlog file number, position
		crossed  bool
	}{
		{"inside", [2]uint64{10, 2000}, [2]uint64{11, 100}, true},
		{"spans the window", [2]uint64{9, 4}, [2]uint64{12, 4}, true},
		{"overlaps the start", [2]uint64{9, 4}, [2]uint64{10, 1001}, true},
		{"overlaps the cut", [2]uint64{11, 499}, [2]uint64{12, 4}, true},
		{"ends at the previous snapshot", [2]uint64{9, 4}, [2]uint64{10, 1000}, false},
		{"starts at the cut", [2]uint64{11, 500}, [2]uint64{12, 4}, false},
		{"before", [2]uint64{8, 4}, [2]uint64{9, 4}, false},
		{"after", [2]uint64{12, 4}, [2]uint64{13, 4}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFx().add(kA, plain(0, 0)...).add(kB, plain(0, 0)...)
			f.in.Changes[kB] = 3
			f.in.Gaps = []change.Gap{{ID: 7, FromFile: binlogName(tc.from[0]), FromPos: tc.from[1],
				ToFile: binlogName(tc.to[0]), ToPos: tc.to[1], Reason: "binlog purged"}}
			p := f.plan(t)
			if !tc.crossed {
				expect(t, p, kA, ActionLink)
				expect(t, p, kB, ActionPair)
				return
			}
			// Every table, changed or not, is refused: only a full
			// backup reads the gap's changes back.
			if !p.Refused {
				t.Fatal("a plan across a gap is not refused")
			}
			for _, k := range []TableKey{kA, kB} {
				expect(t, p, k, ActionRefuse, "refused: the window crossed a capture gap: take a full backup")
			}
			if len(p.Reasons) != 1 || !strings.Contains(p.Reasons[0], "the window (binlog.000010:1000, binlog.000011:500] crossed capture gap #7 (binlog.") ||
				!strings.Contains(p.Reasons[0], "binlog purged") {
				t.Fatalf("reasons %q", p.Reasons)
			}
		})
	}
	f := newFx().add(kA, plain(0, 0)...)
	f.in.Gaps = []change.Gap{{ID: 1, FromFile: "mysql-bin", ToFile: "binlog.000011"}}
	if p := f.plan(t); len(p.Reasons) != 1 || !strings.Contains(p.Reasons[0], "capture gap #1 (mysql-bin:0 to binlog.000011:0) cannot be ordered against the window") {
		t.Fatalf("reasons %q", p.Reasons)
	}
}

func binlogName(n uint64) string { return fmt.Sprintf("binlog.%06d", n) }

func TestFullOnlyTable(t *testing.T) {
	for _, name := range []string{"bintrail_pk", "bintrail_op", "filename", "File_Row_Number"} {
		t.Run(name, func(t *testing.T) {
			d := tdef(kA, col("id", "int", 0), col(name, "varchar", 20))
			f := newFx().addDef(kA, d, snapshot.KindFull)
			tp := expect(t, f.plan(t), kA, ActionLink, "link: no changes in the window: the table file is linked forward")
			if tp.Kind != snapshot.KindFull || tp.Chain != nil || len(tp.Links) != 1 {
				t.Fatalf("%+v", tp)
			}
			f.in.Changes[kA] = 1
			tp = expect(t, f.plan(t), kA, ActionRewrite, "rewrite: the table is always written in full: it has a column named "+name)
			if tp.Kind != snapshot.KindFull || tp.NeedsCompaction {
				t.Fatalf("%+v", tp)
			}
		})
	}
	// A table without a primary or unique key: its rows need not be unique.
	d := tdef(kA, col("a", "int", 0), col("b", "varchar", 5))
	d.Key, d.KeyKind = []string{"a", "b"}, schema.KeyRow
	f0 := newFx().addDef(kA, d, snapshot.KindFull)
	f0.in.Changes[kA] = 2
	if tp := expect(t, f0.plan(t), kA, ActionRewrite, "rewrite: the table is always written in full: it has no primary or unique key"); tp.Kind != snapshot.KindFull {
		t.Fatalf("%+v", tp)
	}
	// A table without a chain that is not full only (an older writer) starts one.
	f := newFx().addDef(kA, stdDef(kA), snapshot.KindFull)
	f.in.Changes[kA] = 1
	if tp := expect(t, f.plan(t), kA, ActionRewrite, "the previous snapshot has no chain for it (kind full)"); tp.Kind != snapshot.KindDelta {
		t.Fatalf("%+v", tp)
	}
}

func TestDeltasOff(t *testing.T) {
	f := newFx().add(kA, plain(0, 1)...).add(kB, plain(0, 1)...)
	f.in.TableDeltas, f.in.Changes[kB] = false, 1
	p := f.plan(t)
	expect(t, p, kA, ActionLink)
	if tp := expect(t, p, kB, ActionRewrite, "rewrite: table deltas are turned off"); tp.Kind != snapshot.KindDelta {
		t.Fatalf("%+v", tp)
	}
}

func TestPreviousNotLocal(t *testing.T) {
	f := newFx().add(kA, plain(0, 1)...).add(kB, plain(0, 1)...)
	f.addDef(kN, tdef(kN, col("id", "int", 0), col("filename", "text", 0)), snapshot.KindFull)
	f.in.PrevLocal, f.in.Changes[kB] = false, 1
	p := f.plan(t)
	for _, k := range []TableKey{kA, kB, kN} {
		expect(t, p, k, ActionRewrite, "rewrite: the previous snapshot is not on local disk")
	}
	if tableOf(t, p, kN).Kind != snapshot.KindFull || p.Refused {
		t.Fatalf("%+v", p)
	}
}

func TestTableListedTwice(t *testing.T) {
	f := newFx().add(kA, plain(0, 0)...)
	f.in.Prev.Tables = append(f.in.Prev.Tables, f.in.Prev.Tables[0])
	p := f.plan(t)
	if !p.Refused || len(p.Tables) != 2 || !slices.Equal(p.Reasons, []string{"db.a: listed twice in the previous snapshot's manifest"}) {
		t.Fatalf("%+v", p)
	}
}

// A table whose footer definition is missing cannot be checked.
func TestMissingFooterRefuses(t *testing.T) {
	f := newFx().add(kA, plain(0, 0)...)
	delete(f.in.Footers, kA)
	expect(t, f.plan(t), kA, ActionRefuse, "refused: the table file's definition is unknown (no footer)")
	f.in.Footers[kA] = snapshot.FooterMeta{SnapshotID: startID}
	f.in.Current[kA] = &schema.Table{}
	expect(t, f.plan(t), kA, ActionRefuse, "no footer")
}
