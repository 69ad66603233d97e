package foldplan

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// The fixture: the previous snapshot is at binlog.000010:1000 (seq 100), the
// cut at binlog.000011:500 (seq 200); chains started at t0, now is t0+2h.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const startID = "20260101T000000Z"

var (
	kA = TableKey{"db", "a"}
	kB = TableKey{"db", "b"}
	kN = TableKey{"db", "n"}
)

func pos(file string, p uint64) binlogpos.Position { return binlogpos.Position{File: file, Pos: p} }

func sha(s string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(s))) }

func col(name, typ string, length int) schema.Column {
	return schema.Column{Name: name, Type: typ, Length: length}
}

func tdef(k TableKey, cols ...schema.Column) *schema.Table {
	return &schema.Table{Schema: k.Schema, Name: k.Table, Columns: cols, Key: []string{cols[0].Name}, KeyKind: schema.KeyPrimary}
}

func stdDef(k TableKey) *schema.Table { return tdef(k, col("id", "int", 0), col("v", "varchar", 10)) }

type fx struct{ in Input }

func newFx() *fx {
	return &fx{in: Input{
		Cut: 200, CutPos: pos("binlog.000011", 500),
		Prev: &snapshot.Manifest{Version: 1, SnapshotID: "20260101T020000Z", Source: "src",
			Position: binlogpos.Position{File: "binlog.000010", Pos: 1000, Seq: 100},
			Files:    map[string]digest.Digest{}},
		PrevLocal: true, Now: t0.Add(2 * time.Hour), TableDeltas: true,
		Changes: map[TableKey]int64{}, Footers: map[TableKey]snapshot.FooterMeta{},
		Current: map[TableKey]*schema.Table{}, Compacted: map[TableKey]CompactedRange{},
	}}
}

// plain returns the entries from..to, one pair each.
func plain(from, to int) []string {
	var es []string
	for i := from; i <= to; i++ {
		es = append(es, Entry(i, i))
	}
	return es
}

// add puts a delta table into the previous snapshot with the given chain
// entries; the table file is 10 MiB and every chain file 1 KiB.
func (f *fx) add(k TableKey, entries ...string) *fx {
	return f.addDef(k, stdDef(k), snapshot.KindDelta, entries...)
}

func (f *fx) addDef(k TableKey, d *schema.Table, kind string, entries ...string) *fx {
	file := k.Schema + "/" + k.Table + ".parquet"
	f.in.Prev.Files[file] = digest.Digest{SHA256: sha(file), Size: 10 << 20}
	mt := snapshot.ManifestTable{Schema: k.Schema, Table: k.Table, File: file, Kind: kind}
	for _, e := range entries {
		for _, suf := range []string{"posdel", "upserts"} {
			p := k.Schema + "/" + k.Table + "." + e + "." + suf
			f.in.Prev.Files[p] = digest.Digest{SHA256: sha(p), Size: 1 << 10}
			mt.Chain = append(mt.Chain, p)
		}
	}
	f.in.Prev.Tables = append(f.in.Prev.Tables, mt)
	f.in.Footers[k] = snapshot.FooterMeta{Table: d, SnapshotID: startID}
	f.in.Current[k] = d.Clone()
	return f
}

// sizes sets the table file's size and the chain's total size (all on the
// chain's last file).
func (f *fx) sizes(k TableKey, table, chain int64) *fx {
	mt, _ := f.in.Prev.Table(k.Schema, k.Table)
	set := func(p string, n int64) {
		d := f.in.Prev.Files[p]
		d.Size = n
		f.in.Prev.Files[p] = d
	}
	set(mt.File, table)
	for _, p := range mt.Chain {
		set(p, 0)
	}
	set(mt.Chain[len(mt.Chain)-1], chain)
	return f
}

func (f *fx) plan(t *testing.T) Plan {
	t.Helper()
	p := Make(f.in)
	for _, tp := range p.Tables {
		if tp.Reason == "" {
			t.Fatalf("%s: %s without a reason", tp.Key, tp.Action)
		}
	}
	return p
}

func tableOf(t *testing.T, p Plan, k TableKey) TablePlan {
	t.Helper()
	for _, tp := range p.Tables {
		if tp.Key == k {
			return tp
		}
	}
	t.Fatalf("no plan for %s in %+v", k, p)
	return TablePlan{}
}

// expect checks a table's action and that its reason holds every want.
func expect(t *testing.T, p Plan, k TableKey, a Action, want ...string) TablePlan {
	t.Helper()
	tp := tableOf(t, p, k)
	if tp.Action != a {
		t.Fatalf("%s: action %s, want %s (%s)", k, tp.Action, a, tp.Reason)
	}
	for _, w := range want {
		if !strings.Contains(tp.Reason, w) {
			t.Fatalf("%s: reason %q does not say %q", k, tp.Reason, w)
		}
	}
	return tp
}

func version(k TableKey, seq uint64, at binlogpos.Position, ddl string, d *schema.Table) change.SchemaVersion {
	return change.SchemaVersion{Source: "src", Schema: k.Schema, Table: k.Table, Version: 2, Seq: seq,
		BinlogFile: at.File, BinlogPos: at.Pos, DDL: ddl, Definition: d}
}
