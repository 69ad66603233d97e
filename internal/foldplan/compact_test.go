package foldplan

import (
	"slices"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/digest"
)

// compactedFor is the range pair a Compact of k's chain entries from..to
// would leave in .compact/.
func compactedFor(f *fx, k TableKey, from, to int) CompactedRange {
	mt, _ := f.in.Prev.Table(k.Schema, k.Table)
	cr := CompactedRange{From: from, To: to,
		Posdel:       k.Schema + "/" + k.Table + "." + Entry(from, to) + ".posdel",
		Upserts:      k.Schema + "/" + k.Table + "." + Entry(from, to) + ".upserts",
		PosdelDigest: digest.Digest{SHA256: sha("range posdel"), Size: 2 << 10}, UpsertsDigest: digest.Digest{SHA256: sha("range upserts"), Size: 3 << 10},
		TableFile: SourceFile{mt.File, f.in.Prev.Files[mt.File].SHA256}}
	for _, p := range mt.Chain[:2*(to-from+1)] {
		cr.Merged = append(cr.Merged, SourceFile{p, f.in.Prev.Files[p].SHA256})
	}
	return cr
}

func TestCompactionTrigger(t *testing.T) {
	rangePlus := func(n int) []string { return append([]string{Entry(0, 14)}, plain(15, 14+n)...) }
	for _, tc := range []struct {
		name    string
		entries []string
		changes int64
		want    bool
	}{
		{"link, 15 entries", plain(0, 14), 0, false},
		{"link, 16 entries", plain(0, 15), 0, true},
		{"link, range + 15 pairs", rangePlus(15), 0, true},
		{"link, range + 14 pairs", rangePlus(14), 0, false},
		{"pair makes 15", plain(0, 13), 1, false},
		{"pair makes 16", plain(0, 14), 1, true},
		{"pair makes range + 15", rangePlus(14), 1, true},
		{"pair makes 17 (compaction still pending)", plain(0, 15), 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFx().add(kA, tc.entries...).add(kB, plain(0, 0)...)
			f.in.Changes[kA] = tc.changes
			p := f.plan(t)
			tp := tableOf(t, p, kA)
			merge := tp.Chain
			if tp.Action == ActionLink {
				merge = merge[:len(merge)-2]
			}
			wantJob := []CompactJob{{Key: kA, Merge: merge}}
			if tp.NeedsCompaction != tc.want || slices.EqualFunc(p.Compact, wantJob, sameJob) != tc.want {
				t.Fatalf("needs compaction %v, compact %v; want %v (%s)", tp.NeedsCompaction, p.Compact, tc.want, tp.Reason)
			}
			if tc.want && !strings.Contains(tp.Reason, "entries (a compaction follows at 16)") {
				t.Fatal(tp.Reason)
			}
		})
	}
	// A refused refresh publishes nothing, so nothing is compacted.
	f := newFx().add(kA, plain(0, 15)...).add(kB, plain(0, 1)...)
	f.in.Current[kB] = nil
	if p := f.plan(t); !p.Refused || p.Compact != nil || !tableOf(t, p, kA).NeedsCompaction {
		t.Fatalf("%+v", p)
	}
}

func TestCompactedRangeUsed(t *testing.T) {
	for _, changes := range []int64{0, 5} {
		f := newFx().add(kA, plain(0, 16)...)
		f.in.Changes[kA] = changes
		cr := compactedFor(f, kA, 0, 14)
		f.in.Compacted[kA] = cr
		tp := tableOf(t, f.plan(t), kA)
		want := []string{"db/a.000000-000014.posdel", "db/a.000000-000014.upserts",
			"db/a.000015.posdel", "db/a.000015.upserts", "db/a.000016.posdel", "db/a.000016.upserts"}
		if !slices.Equal(tp.Chain, want) || tp.UseCompacted == nil || tp.UseCompacted.To != 14 || tp.NeedsCompaction {
			t.Fatalf("%+v", tp)
		}
		if !tp.DropCompacted || tp.CompactNote != "compacted range 000000-000014 from .compact/ replaces 15 chain entries" {
			t.Fatal(tp.CompactNote)
		}
		if l := tp.Links[1]; !l.FromCompact || l.Src != cr.Posdel || l.Dst != want[0] || l.Digest != cr.PosdelDigest {
			t.Fatalf("%+v", l)
		}
		if l := tp.Links[2]; !l.FromCompact || l.Src != cr.Upserts || l.Digest != cr.UpsertsDigest {
			t.Fatalf("%+v", l)
		}
		if l := tp.Links[3]; l.FromCompact || l.Src != "db/a.000015.posdel" {
			t.Fatalf("%+v", l)
		}
		if changes == 0 {
			expect(t, f.plan(t), kA, ActionLink, "the table file and 3 chain entries")
		} else if tp.Action != ActionPair || tp.Next != 17 || !strings.Contains(tp.Reason, "new pair 000017 after 3 chain entries (chain 9.0 KiB") {
			t.Fatalf("%+v", tp)
		}
	}
}

// The size rule sees the chain as it will be listed: a compacted range that
// dropped dead rows keeps the table on deltas.
func TestCompactedRangeCountsForSize(t *testing.T) {
	f := newFx().add(kA, plain(0, 16)...).sizes(kA, 10<<20, 30<<20)
	f.in.Changes[kA] = 1
	expect(t, f.plan(t), kA, ActionRewrite, "the chain is 30.0 MiB")
	f = newFx().add(kA, plain(0, 16)...)
	for _, e := range plain(0, 14) {
		for _, s := range []string{".posdel", ".upserts"} {
			f.in.Prev.Files["db/a."+e+s] = digest.Digest{SHA256: sha("db/a." + e + s), Size: 1 << 20}
		}
	}
	f.in.Changes[kA] = 1
	expect(t, f.plan(t), kA, ActionRewrite, "the chain is 30.0 MiB")
	f.in.Compacted[kA] = compactedFor(f, kA, 0, 14)
	expect(t, f.plan(t), kA, ActionPair, "chain 9.0 KiB")
}

func TestCompactedRangeIgnored(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(f *fx, cr *CompactedRange)
		want   string
	}{
		{"table rewritten since", func(f *fx, cr *CompactedRange) { cr.TableFile.SHA256 = sha("old table file") },
			"range 000000-000014 was merged for another table file than db/a.parquet (the table was rewritten since)"},
		{"chain file differs", func(f *fx, cr *CompactedRange) { cr.Merged[5].SHA256 = sha("old") },
			"range 000000-000014 was merged from another db/a.000002.upserts than the chain lists (the chain was rewritten since)"},
		{"chain moved on to a range", func(f *fx, cr *CompactedRange) {
			f.in.Prev.Tables[0].Chain = append([]string{"db/a.000000-000014.posdel", "db/a.000000-000014.upserts"}, f.in.Prev.Tables[0].Chain[30:]...)
			f.in.Prev.Files["db/a.000000-000014.posdel"] = digest.Digest{}
			f.in.Prev.Files["db/a.000000-000014.upserts"] = digest.Digest{}
		}, "range 000000-000014 merged 30 chain files; the chain lists 6"},
		{"chain path differs", func(f *fx, cr *CompactedRange) { cr.Merged[2].Path = "db/a.000009.posdel" },
			"range 000000-000014 was merged from db/a.000009.posdel, but the chain lists db/a.000001.posdel there (the chain moved on)"},
		{"range and entries disagree", func(f *fx, cr *CompactedRange) { cr.To = 13 },
			"range 000000-000013 does not cover the entries 000000 to 000014 it merged"},
		{"does not start the chain", func(f *fx, cr *CompactedRange) { cr.From = 1 }, "range 1-14"},
		{"no files", func(f *fx, cr *CompactedRange) { cr.Upserts = "" }, "is malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFx().add(kA, plain(0, 16)...)
			cr := compactedFor(f, kA, 0, 14)
			tc.mutate(f, &cr)
			f.in.Compacted[kA] = cr
			tp := expect(t, f.plan(t), kA, ActionLink)
			if tp.UseCompacted != nil || !tp.DropCompacted || !strings.HasPrefix(tp.CompactNote, "compacted range in .compact/ ignored: ") ||
				!strings.Contains(tp.CompactNote, tc.want) || !slices.Equal(tp.Chain, f.in.Prev.Tables[0].Chain) {
				t.Fatalf("%+v", tp)
			}
			if !strings.Contains(tp.String(), "db.a: link: ") || !strings.Contains(tp.String(), tc.want) {
				t.Fatal(tp.String())
			}
		})
	}
	// A table rewritten in full drops the waiting range.
	f := newFx().add(kA, plain(0, 16)...)
	f.in.Compacted[kA] = compactedFor(f, kA, 0, 14)
	f.in.PrevLocal = false
	tp := expect(t, f.plan(t), kA, ActionRewrite)
	if tp.UseCompacted != nil || !tp.DropCompacted || tp.CompactNote != "compacted range 000000-000014 in .compact/ ignored: the table is rewritten in full" {
		t.Fatalf("%+v", tp)
	}
}

// sameJob compares compaction jobs; Merge must be the chain before the new
// pair and start at entry 000000.
func sameJob(a, b CompactJob) bool {
	return a.Key == b.Key && slices.Equal(a.Merge, b.Merge) && len(a.Merge) >= 4 && strings.Contains(a.Merge[0], ".000000")
}
