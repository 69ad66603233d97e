package snapshot

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/digest"
)

// TestManifestSizes: a table's size is its table file and chain as the
// manifest records them; files it does not list count 0.
func TestManifestSizes(t *testing.T) {
	m := Manifest{Tables: []ManifestTable{{Schema: "db", Table: "t", File: "f", Chain: []string{"p", "u"}}},
		Files: map[string]digest.Digest{"f": {Size: 10}, "p": {Size: 2}, "u": {Size: 3}, "other": {Size: 100}}}
	if got := m.TableSize("db", "t"); got != 15 {
		t.Errorf("TableSize %d, want 15", got)
	}
	if got := m.TableSize("db", "gone"); got != 0 {
		t.Errorf("TableSize of a table not held %d, want 0", got)
	}
	if got := m.FilesSize("p", "other", "missing"); got != 102 {
		t.Errorf("FilesSize %d, want 102", got)
	}
}

// TestManifestAddTable: a table with no kind is delta with a chain and full
// without; a given kind stays; no origin is the dump's; every file is
// listed with its digest, the chain in order.
func TestManifestAddTable(t *testing.T) {
	var m Manifest
	d := func(n int64) digest.Digest { return digest.Digest{SHA256: strings.Repeat("a", 64), Size: n} }
	m.AddTable(ManifestTable{Schema: "db", Table: "chained", File: "db/chained.parquet"}, d(1),
		FileDigest{"db/chained.000000.posdel", d(2)}, FileDigest{"db/chained.000000.upserts", d(3)})
	m.AddTable(ManifestTable{Schema: "db", Table: "plain", File: "db/plain.parquet", Chain: []string{"ignored"}}, d(4))
	m.AddTable(ManifestTable{Schema: "db", Table: "kept", File: "db/kept.parquet", Kind: KindDelta, Origin: OriginPair}, d(5))
	want := []ManifestTable{
		{Schema: "db", Table: "chained", File: "db/chained.parquet", Kind: KindDelta, Origin: OriginDump,
			Chain: []string{"db/chained.000000.posdel", "db/chained.000000.upserts"}},
		{Schema: "db", Table: "plain", File: "db/plain.parquet", Kind: KindFull, Origin: OriginDump},
		{Schema: "db", Table: "kept", File: "db/kept.parquet", Kind: KindDelta, Origin: OriginPair},
	}
	if !reflect.DeepEqual(m.Tables, want) {
		t.Errorf("tables\n%+v\nwant\n%+v", m.Tables, want)
	}
	wantFiles := map[string]digest.Digest{"db/chained.parquet": d(1), "db/chained.000000.posdel": d(2),
		"db/chained.000000.upserts": d(3), "db/plain.parquet": d(4), "db/kept.parquet": d(5)}
	if !reflect.DeepEqual(m.Files, wantFiles) {
		t.Errorf("files %v, want %v", m.Files, wantFiles)
	}
}
