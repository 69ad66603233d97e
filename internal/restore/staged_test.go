package restore

import (
	"io"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// TestStagedRunsMergeInKeyOrder: rows that arrive mostly in key order,
// some out of it, are staged as a main run and side runs whose merge reads
// every row once, in key order, with the fingerprint of all of them.
func TestStagedRunsMergeInKeyOrder(t *testing.T) {
	def := &schema.Table{Schema: "app", Name: "t", Columns: []schema.Column{{Name: "id", Type: "bigint"}, {Name: "v", Type: "varchar", Length: 20}},
		Key: []string{"id"}, KeyKind: schema.KeyPrimary}
	meta := snapshot.FooterMeta{CreateTable: "CREATE TABLE `t` (`id` bigint NOT NULL, `v` varchar(20), PRIMARY KEY (`id`))"}
	order, err := NewKeyOrder(def)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	s := &runSorter{dir: dir, def: def, meta: meta, order: order}
	if s.main, err = s.create("run-main.parquet", snapshot.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	var ids []int
	for id := -500; id < 3000; id++ {
		if id%7 != 0 {
			ids = append(ids, id)
		}
	}
	late := []int{}
	for id := -497; id < 3000; id += 7 {
		late = append(late, id) // the multiples of 7, after the rest
	}
	rand.Shuffle(len(late), func(i, j int) { late[i], late[j] = late[j], late[i] })
	ids = append(ids, late...)
	one, err := snapshot.NewTableWriter(io.Discard, def, meta, snapshot.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		row := []rowimage.Cell{rowimage.TextCell([]byte(strconv.Itoa(id))), rowimage.TextCell([]byte("v" + strconv.Itoa(id)))}
		if err := one.AppendSQL(row); err != nil {
			t.Fatal(err)
		}
		if err := s.add(row); err != nil {
			t.Fatal(err)
		}
	}
	whole, err := one.Close()
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.finish(moment.Cut{Seq: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Runs) != 2 || m.Fingerprint != whole.Fingerprint {
		t.Fatalf("runs %v, fingerprint %s; want a main and a side run, fingerprint %s", m.Runs, m.Fingerprint, whole.Fingerprint)
	}
	r, err := openRuns(dir, m.Runs, order)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	prev, n := -1<<31, 0
	for {
		row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		id, _ := strconv.Atoi(string(row[0].Text))
		if id <= prev {
			t.Fatalf("row %d: id %d after %d", n, id, prev)
		}
		prev = id
		n++
	}
	if n != len(ids) {
		t.Fatalf("merged %d rows of %d", n, len(ids))
	}
}
