package main

import (
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/catalog"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

func TestSnapshotsFormat(t *testing.T) {
	list := []snapshotEntry{
		{ID: "20261129T061500Z", Kind: "full", Position: binlogpos.Position{File: "mysql-bin.000042", Pos: 1234, Seq: 10},
			CreatedAt: time.Date(2026, 11, 29, 6, 15, 0, 0, time.UTC), Bytes: 3 << 20, NewBytes: 3 << 20,
			Tables: []snapshotTable{
				{Schema: "db1", Table: "t", Origin: "dump", Kind: "delta", Chain: 1, Rows: 1000, NewBytes: 2 << 20, Bytes: 2 << 20},
				{Schema: "db1", Table: "longer_name", Origin: "dump", Kind: "full", Rows: 7, NewBytes: 1 << 20, Bytes: 1 << 20},
			}},
		{ID: "20261129T062000Z", Current: true, Kind: "refresh", Prev: "20261129T061500Z",
			Position:  binlogpos.Position{File: "mysql-bin.000043", Pos: 99, Seq: 25},
			CreatedAt: time.Date(2026, 11, 29, 6, 20, 0, 0, time.UTC), Bytes: 3<<20 + 2048, NewBytes: 2048,
			Tables: []snapshotTable{
				{Schema: "db1", Table: "t", Origin: "compacted+pair", Kind: "delta", Chain: 2, Rows: 1000, NewBytes: 2048, Bytes: 2<<20 + 2048},
			}},
		{ID: "20261129T062500Z", Kind: "full", CreatedAt: time.Date(2026, 11, 29, 6, 25, 0, 0, time.UTC)},
	}
	var b strings.Builder
	if err := writeSnapshots(&b, list); err != nil {
		t.Fatal(err)
	}
	want := `20261129T061500Z  full  mysql-bin.000042:1234 seq 10  created 2026-11-29T06:15:00Z  2 tables  3.0 MiB, 3.0 MiB new
    TABLE            ORIGIN  KIND   CHAIN  ROWS  NEW      TOTAL
    db1.t            dump    delta  1      1000  2.0 MiB  2.0 MiB
    db1.longer_name  dump    full   0      7     1.0 MiB  1.0 MiB
20261129T062000Z  refresh  mysql-bin.000043:99 seq 25  created 2026-11-29T06:20:00Z  1 table  3.0 MiB, 2.0 KiB new  [current]
    TABLE  ORIGIN          KIND   CHAIN  ROWS  NEW      TOTAL
    db1.t  compacted+pair  delta  2      1000  2.0 KiB  2.0 MiB
20261129T062500Z  full  :0 seq 0  created 2026-11-29T06:25:00Z  0 tables  0 B, 0 B new
`
	if got := b.String(); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestSnapshotsNewBytes publishes a snapshot and a refresh that hard-links
// its table file and writes a new chain file, and checks what is counted new.
func TestSnapshotsNewBytes(t *testing.T) {
	dir := t.TempDir()
	ids := []string{"20261129T061500Z", "20261129T062000Z"}
	a, err := snapshot.NewBuilder(dir, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	write := func(b *snapshot.Builder, rel, data string) digest.Digest {
		d, err := b.WriteFile(rel, func(w io.Writer) error { _, err := io.WriteString(w, data); return err })
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	fd := write(a, "db1/t.parquet", strings.Repeat("x", 100))
	write(a, "db1/t.000000.posdel", "p0")
	tbl := snapshot.ManifestTable{Schema: "db1", Table: "t", File: "db1/t.parquet", Rows: 5,
		Chain: []string{"db1/t.000000.posdel"}, Kind: snapshot.KindDelta}
	if err := a.Publish(snapshot.Manifest{Source: "main", Tables: []snapshot.ManifestTable{tbl}}); err != nil {
		t.Fatal(err)
	}
	b, err := snapshot.NewBuilder(dir, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Link("db1/t.parquet", filepath.Join(dir, snapshot.SnapshotsDir, ids[0], "db1", "t.parquet"), fd); err != nil {
		t.Fatal(err)
	}
	write(b, "db1/t.000000.posdel", "p00")
	tbl.Origin = snapshot.OriginPair
	if err := b.Publish(snapshot.Manifest{Source: "main", Kind: snapshot.SnapshotRefresh, Prev: ids[0],
		Tables: []snapshot.ManifestTable{tbl}}); err != nil {
		t.Fatal(err)
	}
	list, err := catalog.LoadSnapshots(dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Current || !list[1].Current {
		t.Fatalf("list %+v", list)
	}
	first, second := list[0], list[1]
	if first.Kind != "full" || first.Tables[0].Origin != "dump" || first.Bytes != 102 || first.NewBytes != 102 ||
		first.Tables[0].Chain != 0 || first.Tables[0].Rows != 5 {
		t.Fatalf("first %+v", first)
	}
	if second.Kind != "refresh" || second.Tables[0].Origin != "pair" || second.Bytes != 103 || second.NewBytes != 3 ||
		second.Tables[0].NewBytes != 3 || second.Tables[0].Bytes != 103 {
		t.Fatalf("second %+v", second)
	}
}
