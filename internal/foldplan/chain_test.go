package foldplan

import (
	"testing"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

func TestParseChainEntry(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to int
		suffix   string
		ok       bool
	}{
		{"t.000003.posdel", 3, 3, "posdel", true},
		{"t.000000-000014.upserts", 0, 14, "upserts", true},
		{"db/t.000015.upserts", 15, 15, "upserts", true},
		{"db/my.table.000001.posdel", 1, 1, "posdel", true},
		{"t.1000000.posdel", 1000000, 1000000, "posdel", true},
		{"t.000003.parquet", 0, 0, "", false},
		{"t.parquet", 0, 0, "", false},
		{"000003.posdel", 0, 0, "", false},
		{"db/.000003.posdel", 0, 0, "", false},
		{"t.3.posdel", 0, 0, "", false},
		{"t.0000003.posdel", 0, 0, "", false},
		{"t.00000a.posdel", 0, 0, "", false},
		{"t.000014-000000.posdel", 0, 0, "", false},
		{"t.000003-000003.posdel", 0, 0, "", false},
		{"t.000000-.posdel", 0, 0, "", false},
		{"t.-000001.posdel", 0, 0, "", false},
		{"t.+00001.posdel", 0, 0, "", false},
		{"", 0, 0, "", false},
	} {
		from, to, suffix, ok := ParseChainEntry(tc.name)
		if from != tc.from || to != tc.to || suffix != tc.suffix || ok != tc.ok {
			t.Errorf("ParseChainEntry(%q) = %d, %d, %q, %v; want %d, %d, %q, %v",
				tc.name, from, to, suffix, ok, tc.from, tc.to, tc.suffix, tc.ok)
		}
	}
}

func TestNextChainNumber(t *testing.T) {
	for _, tc := range []struct {
		chain []string
		want  int
	}{
		{nil, 0},
		{[]string{"db/t.000000.posdel", "db/t.000000.upserts"}, 1},
		{[]string{"db/t.000000-000014.posdel", "db/t.000000-000014.upserts", "db/t.000015.posdel", "db/t.000015.upserts"}, 16},
		{[]string{"db/t.000000-000014.posdel", "db/t.000000-000014.upserts"}, 15},
		{[]string{"db/t.000000.posdel", "junk", "db/t.000002.upserts"}, 3},
	} {
		if got := NextChainNumber(tc.chain); got != tc.want {
			t.Errorf("NextChainNumber(%q) = %d, want %d", tc.chain, got, tc.want)
		}
	}
	if Entry(3, 3) != "000003" || Entry(0, 14) != "000000-000014" {
		t.Fatal(Entry(3, 3), Entry(0, 14))
	}
}

func TestMalformedChainRewrites(t *testing.T) {
	for name, mutate := range map[string]func(*snapshot.ManifestTable){
		"odd":          func(m *snapshot.ManifestTable) { m.Chain = m.Chain[:3] },
		"no start":     func(m *snapshot.ManifestTable) { m.Chain = m.Chain[2:] },
		"empty":        func(m *snapshot.ManifestTable) { m.Chain = nil },
		"swapped":      func(m *snapshot.ManifestTable) { m.Chain[0], m.Chain[1] = m.Chain[1], m.Chain[0] },
		"other table":  func(m *snapshot.ManifestTable) { m.Chain[2], m.Chain[3] = "db/x.000001.posdel", "db/x.000001.upserts" },
		"unknown kind": func(m *snapshot.ManifestTable) { m.Kind = "v083" },
		"full + chain": func(m *snapshot.ManifestTable) { m.Kind = snapshot.KindFull },
		"not parquet":  func(m *snapshot.ManifestTable) { m.File = "db/a.csv" },
	} {
		t.Run(name, func(t *testing.T) {
			f := newFx().add(kA, plain(0, 2)...)
			mutate(&f.in.Prev.Tables[0])
			f.in.Prev.Files["db/x.000001.posdel"] = digest.Digest{}
			f.in.Prev.Files["db/x.000001.upserts"] = digest.Digest{}
			f.in.Prev.Files["db/a.csv"] = digest.Digest{}
			// Even without changes: a malformed chain is not linked forward.
			p := f.plan(t)
			tp := expect(t, p, kA, ActionRewrite, "rewrite: the previous chain is malformed")
			if p.Refused || tp.Chain != nil || tp.Links != nil {
				t.Fatalf("%+v", tp)
			}
		})
	}
}
