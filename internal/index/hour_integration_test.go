package index

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/testsuite"
)

// TestHourReads stores interleaved events of several tables over three hours
// (the one before the table's partitions, in p_before; the current one; the
// next) and two sources, then reads each hour back by table.
func TestHourReads(t *testing.T) {
	srv := testsuite.StartIndex(t)
	s := openStore(t, srv, "dbtrail_hour")
	ctx := context.Background()
	hour := change.HourID(t0)
	rng := rand.New(rand.NewPCG(9, 9))
	tables := []string{"orders", "Orders", "a", "z😀", "order"}
	var all []change.Event
	for seq := uint64(1); seq <= 3000; seq++ {
		e := ev(seq, tables[rng.IntN(len(tables))], fmt.Sprint(rng.IntN(50)), []change.Op{change.OpInsert, change.OpUpdate, change.OpDelete}[rng.IntN(3)], fmt.Sprint(seq))
		// seq 1..1000 in the hour before, 1001..2000 in this one, the rest after
		e.CommitTime = change.HourTime(hour - 1 + uint32((seq-1)/1000)).Add(time.Duration(seq) * time.Millisecond)
		if seq%7 == 0 {
			e.Schema = "other"
		}
		all = append(all, e)
	}
	for i := 0; i < len(all); i += 500 {
		commitEvents(t, s, "main", all[i:i+500]...)
	}
	commitEvents(t, s, "second", ev(1, "orders", "1", change.OpInsert, "1"))

	for _, h := range []uint32{hour - 1, hour, hour + 1, hour + 2} {
		var want []change.Event
		for _, e := range all {
			if change.HourID(e.CommitTime) == h {
				want = append(want, e)
			}
		}
		slices.SortFunc(want, func(a, b change.Event) int {
			return cmp.Or(strings.Compare(a.Schema, b.Schema), strings.Compare(a.Table, b.Table), cmp.Compare(a.Seq, b.Seq))
		})
		var got []change.Event
		if err := s.HourEvents(ctx, "main", h, func(e change.Event) error {
			got = append(got, e)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("hour %s: %d events, want %d", PartitionName(h), len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if !g.CommitTime.Equal(w.CommitTime) || g.CommitTime.Location() != time.UTC {
				t.Fatalf("hour %s event %d: commit time %v, want %v", PartitionName(h), i, g.CommitTime, w.CommitTime)
			}
			g.CommitTime, w.CommitTime = time.Time{}, time.Time{}
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("hour %s event %d:\n got %+v\nwant %+v", PartitionName(h), i, g, w)
			}
		}
		counts, err := s.HourTables(ctx, "main", h)
		if err != nil {
			t.Fatal(err)
		}
		var wantCounts []HourTable
		for _, e := range want {
			if n := len(wantCounts); n == 0 || wantCounts[n-1].Schema != e.Schema || wantCounts[n-1].Table != e.Table {
				wantCounts = append(wantCounts, HourTable{Schema: e.Schema, Table: e.Table, FirstSeq: e.Seq})
			}
			c := &wantCounts[len(wantCounts)-1]
			c.Events++
			c.LastSeq = e.Seq
		}
		if !reflect.DeepEqual(counts, wantCounts) {
			t.Fatalf("hour %s tables:\n got %+v\nwant %+v", PartitionName(h), counts, wantCounts)
		}
	}

	var got []change.Event
	if err := s.HourTableEvents(ctx, "second", hour, "shop", "orders", func(e change.Event) error {
		got = append(got, e)
		return nil
	}); err != nil || len(got) != 1 || got[0].Seq != 1 {
		t.Fatalf("other source: %v %v", got, err)
	}
	stop := errors.New("stop")
	if err := s.HourEvents(ctx, "main", hour, func(change.Event) error { return stop }); err != stop {
		t.Fatalf("callback error returned as %v", err)
	}
}
