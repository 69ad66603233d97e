package archive

import (
	"bytes"
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/testsuite"
)

// TestIndexToArchive stores random events of the test hour and the next in
// a real index, archives the test hour from index.Store.HourEvents and reads
// the file back: the same events, byte for byte, and the footer's tables
// are the index's HourTables.
func TestIndexToArchive(t *testing.T) {
	srv := testsuite.StartIndex(t)
	ctx := context.Background()
	if err := srv.Exec(ctx, "DROP DATABASE IF EXISTS dbtrail_archive", "CREATE DATABASE dbtrail_archive"); err != nil {
		t.Fatal(err)
	}
	s, err := index.Open(ctx, srv.DSN("dbtrail_archive"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Init(ctx); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(17, 17))
	evs := randomEvents(rng, 3000, len(testTables))
	for i := range evs {
		e := &evs[i]
		// The index stores images as JSON text: an empty image is not one.
		if e.Before != nil && len(e.Before) == 0 {
			e.Before = []byte(`{}`)
		}
		if e.After != nil && len(e.After) == 0 {
			e.After = []byte(`{}`)
		}
		if i%5 == 0 { // some of the next hour, which the file must not hold
			e.CommitTime = e.CommitTime.Add(time.Hour)
		}
	}
	bySeq := slices.Clone(evs)
	slices.SortFunc(bySeq, func(a, b change.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	for i := 0; i < len(bySeq); i += 400 {
		tx, err := s.Begin(ctx, "main", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.InsertEvents(ctx, bySeq[i:min(i+400, len(bySeq))]); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}

	hour := change.HourID(testHour)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, "main", testHour, WriterOptions{RowGroupRows: 300})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.HourEvents(ctx, "main", hour, func(e change.Event) error { return w.Append(&e) }); err != nil {
		t.Fatal(err)
	}
	res, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	var want []change.Event
	for _, e := range evs {
		if change.HourID(e.CommitTime) == hour {
			want = append(want, e)
		}
	}
	got, err := readAll(openFile(t, buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if d := sameEvents(got, want); d != "" {
		t.Fatal(d)
	}
	checkFooter(t, res.Footer, want)
	tables, err := s.HourTables(ctx, "main", hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != len(res.Footer.Tables) {
		t.Fatalf("index has %d tables in the hour, the file %d", len(tables), len(res.Footer.Tables))
	}
	for i, ht := range tables {
		ft := res.Footer.Tables[i]
		if ht.Schema != ft.Schema || ht.Table != ft.Table || ht.Events != ft.Events || ht.FirstSeq != ft.FirstSeq || ht.LastSeq != ft.LastSeq {
			t.Fatalf("table %d: index %+v, file %+v", i, ht, ft)
		}
	}
}
