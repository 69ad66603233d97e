package moment

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/schemahist"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/when"
)

func manifest(id string, seq uint64, p binlogpos.Position, tables ...string) snapshot.Manifest {
	p.Seq = seq
	m := snapshot.Manifest{SnapshotID: id, Position: p}
	for _, t := range tables {
		s, n, _ := strings.Cut(t, ".")
		m.Tables = append(m.Tables, snapshot.ManifestTable{Schema: s, Table: n, File: s + "/" + n + ".parquet"})
	}
	return m
}

func cutAt(seq uint64, p binlogpos.Position) Cut {
	p.Seq = seq
	return Cut{At: when.At{Kind: when.KindSeq, Seq: seq}, Seq: seq, Landed: true, Txn: change.Txn{Position: p, CommitTime: t0}}
}

func TestChooseBase(t *testing.T) {
	f := facts() // gap after seq 40: binlog.000002:500 to binlog.000004:4
	snaps := []snapshot.Manifest{
		manifest("20261129T080000Z", 10, pos("binlog.000001", 900)),
		manifest("20261129T080500Z", 30, pos("binlog.000002", 300)),
		manifest("20261129T081000Z", 40, pos("binlog.000004", 100)), // full backup after the gap, nothing captured since
		manifest("20261129T081500Z", 70, pos("binlog.000005", 100)),
	}
	for _, c := range []struct {
		cut  Cut
		want string
		code Code
	}{
		{cutAt(10, pos("binlog.000001", 880)), "20261129T080000Z", ""},
		{cutAt(35, pos("binlog.000002", 400)), "20261129T080500Z", ""},
		{cutAt(40, pos("binlog.000002", 480)), "20261129T080500Z", ""}, // the last transaction before the gap
		{cutAt(50, pos("binlog.000004", 800)), "20261129T081000Z", ""},
		{cutAt(90, pos("binlog.000005", 900)), "20261129T081500Z", ""},
		{cutAt(5, pos("binlog.000001", 500)), "", CodeBeforeSnapshots},
	} {
		m, err := ChooseBase(c.cut, snaps, f.Gaps, f.Starts)
		if c.code != "" {
			if refusedCode(t, err) != c.code {
				t.Errorf("cut %d: %v, want %s", c.cut.Seq, err, c.code)
			}
			continue
		}
		if err != nil || m.SnapshotID != c.want {
			t.Errorf("cut %d: %s %v, want %s", c.cut.Seq, m.SnapshotID, err, c.want)
		}
	}
	// Without the backup after the gap, a cut after it is refused.
	_, err := ChooseBase(cutAt(50, pos("binlog.000004", 800)), snaps[:2], f.Gaps, f.Starts)
	if refusedCode(t, err) != CodeGap || !strings.Contains(err.Error(), "capture gap #1") {
		t.Fatalf("across the gap: %v", err)
	}
	if _, err := ChooseBase(cutAt(50, pos("binlog.000004", 800)), nil, nil, nil); refusedCode(t, err) != CodeNoSnapshot {
		t.Fatalf("no snapshot: %v", err)
	}
}

func def(schemaName, name string, cols ...string) *schema.Table {
	t := &schema.Table{Schema: schemaName, Name: name, Key: []string{cols[0]}, KeyKind: schema.KeyPrimary}
	for _, c := range cols {
		t.Columns = append(t.Columns, schema.Column{Name: c, Type: "int"})
	}
	return t
}

func version(d *schema.Table, k TableKey, seq uint64, p binlogpos.Position, ddl string) change.SchemaVersion {
	return change.SchemaVersion{Schema: k.Schema, Table: k.Table, Seq: seq, BinlogFile: p.File, BinlogPos: p.Pos, DDL: ddl, Definition: d, CreatedAt: time.Now()}
}

func TestMakePlan(t *testing.T) {
	orders, items, fresh := TableKey{"shop", "orders"}, TableKey{"shop", "items"}, TableKey{"shop", "fresh"}
	base := manifest("20261129T080500Z", 30, pos("binlog.000002", 300), "shop.orders", "shop.items")
	footers := map[TableKey]*schema.Table{orders: def("shop", "orders", "id", "v"), items: def("shop", "items", "id", "n")}
	hist := []change.SchemaVersion{
		version(def("shop", "orders", "id", "v"), orders, 0, pos("binlog.000001", 4), "-- read from the source"),
		version(def("shop", "items", "id", "n"), items, 0, pos("binlog.000001", 4), "-- read from the source"),
		version(def("shop", "orders", "id", "v"), orders, 32, pos("binlog.000002", 350), "ALTER TABLE orders ADD INDEX (v)"),
		version(def("shop", "items", "id", "n", "extra"), items, 36, pos("binlog.000002", 420), "ALTER TABLE items ADD extra INT"),
		version(def("shop", "fresh", "id"), fresh, 38, pos("binlog.000002", 450), "CREATE TABLE fresh (id INT PRIMARY KEY)"),
		version(nil, orders, 45, pos("binlog.000004", 900), "DROP TABLE orders"),
		version(def("shop", "mysql_thing", "id"), TableKey{"mysql", "user"}, 0, pos("binlog.000001", 4), "-- system"),
	}
	in := func(seq uint64, p binlogpos.Position, sel Selection) PlanInput {
		return PlanInput{Source: "main", Cut: cutAt(seq, p), Footers: footers, History: hist, Select: sel}
	}
	// Before the ALTER of items: both tables, windows from the base.
	p, err := MakePlan(in(34, pos("binlog.000002", 400), Selection{}), base)
	if err != nil || len(p.Tables) != 2 || p.Tables[0].Key() != items || p.Tables[1].After != 30 || p.Tables[1].Upto != 34 {
		t.Fatalf("plan at 34: %+v %v", p, err)
	}
	// The index-only ALTER of orders keeps its rows.
	if _, err := MakePlan(in(34, pos("binlog.000002", 400), Selection{Tables: []string{"shop.orders"}}), base); err != nil {
		t.Fatal(err)
	}
	// After the ALTER of items: its rows are reshaped on the way (the
	// added column's implicit 0).
	p, err = MakePlan(in(37, pos("binlog.000002", 440), Selection{Tables: []string{"shop.items"}}), base)
	if err != nil || p.Tables[0].Lineage == nil || p.Tables[0].Lineage.Steps[0].Kind != schemahist.StepReshape {
		t.Fatalf("items after ALTER: %+v %v", p, err)
	}
	// A type change that converts values cannot be folded.
	conv := append(slices.Clone(hist), version(def("shop", "orders", "id", "v"), orders, 39, pos("binlog.000002", 455), "ALTER TABLE orders MODIFY v INT"))
	conv[len(conv)-1].Definition.Columns[1].Type = "bigint"
	conv[len(conv)-1].Definition.Columns[1].Unsigned = true
	_, err = MakePlan(PlanInput{Source: "main", Cut: cutAt(40, pos("binlog.000002", 470)), Footers: footers, History: conv,
		Select: Selection{Tables: []string{"shop.orders"}}}, base)
	if refusedCode(t, err) != CodeShape || !strings.Contains(err.Error(), "cannot be folded") {
		t.Fatalf("orders after a type change: %v", err)
	}
	// A DDL at the cut's seq but after its transaction is not in the cut.
	if _, err := MakePlan(in(36, pos("binlog.000002", 410), Selection{Tables: []string{"shop.items"}}), base); err != nil {
		t.Fatalf("items at the seq of its ALTER, before it: %v", err)
	}
	// A table created after the base starts empty at its CREATE; an
	// unknown one is refused.
	p, err = MakePlan(in(39, pos("binlog.000002", 460), Selection{Tables: []string{"shop.fresh"}}), base)
	if err != nil || len(p.Tables) != 1 || p.Tables[0].Lineage == nil || !p.Tables[0].Lineage.Created {
		t.Fatalf("fresh: %+v %v", p, err)
	}
	_, err = MakePlan(in(39, pos("binlog.000002", 460), Selection{Tables: []string{"shop.nope"}}), base)
	if refusedCode(t, err) != CodeUnknownTable || !strings.Contains(err.Error(), "shop.orders") {
		t.Fatalf("nope: %v", err)
	}
	_, err = MakePlan(in(39, pos("binlog.000002", 460), Selection{Schemas: []string{"nowhere"}}), base)
	if refusedCode(t, err) != CodeUnknownTable {
		t.Fatalf("schema nowhere: %v", err)
	}
	// A dropped table is not at the moment; system schemas never are.
	p, err = MakePlan(in(46, pos("binlog.000004", 950), Selection{Schemas: []string{"shop"}}), base)
	if err != nil || len(p.Tables) != 2 || p.Tables[0].Key() != fresh || p.Tables[1].Key() != items {
		t.Fatalf("after the drop: %+v %v", p, err)
	}
	_, err = MakePlan(in(46, pos("binlog.000004", 950), Selection{Tables: []string{"shop.orders"}}), base)
	if refusedCode(t, err) != CodeUnknownTable {
		t.Fatalf("dropped orders: %v", err)
	}
}
