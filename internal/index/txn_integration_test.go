package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/testsuite"
)

// TestTxnLookups builds a stream of 3,000 transactions of 1 to 40 events
// over several tables, binlog files, hours and two GTID domains (stored in
// chunks of several tables' runs), and checks every lookup by time,
// position, seq and GTID against a brute-force answer over the events.
func TestTxnLookups(t *testing.T) {
	srv := testsuite.StartIndex(t)
	s := openStore(t, srv, "dbtrail_txn")
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 7))
	var all []change.Event
	base := time.Now().UTC().Truncate(time.Hour).Add(-3 * time.Hour)
	seq, file, pos := uint64(0), 1, uint64(4)
	clock := base
	var gtidN [2]uint64
	for txn := 0; txn < 3000; txn++ {
		if r.IntN(200) == 0 {
			file, pos = file+1, 4
		}
		n := 1 + r.IntN(40)
		if r.IntN(4) > 0 {
			n = 1 + r.IntN(3)
		}
		pos += uint64(100 + r.IntN(900))
		if r.IntN(3) > 0 { // several transactions share a second
			clock = clock.Add(time.Duration(r.IntN(5)) * time.Second)
		}
		dom := r.IntN(2)
		gtidN[dom]++
		gtid := fmt.Sprintf("%d-1-%d", dom, gtidN[dom])
		for i := 0; i < n; i++ {
			seq++
			tbl := fmt.Sprintf("t%d", r.IntN(3))
			if n > 5 {
				tbl = fmt.Sprintf("t%d", i*3/n) // a run per table
			}
			e := ev(seq, tbl, fmt.Sprint(seq), change.OpInsert, "1")
			e.CommitTime, e.BinlogFile, e.EndPos, e.GTID = clock, fmt.Sprintf("mariadb-bin.%06d", file), pos, gtid
			all = append(all, e)
		}
	}
	for i := 0; i < len(all); i += 5000 {
		commitEvents(t, s, "lk", all[i:min(i+5000, len(all))]...)
	}
	last := all[len(all)-1].Seq
	// brute is the last event with floor < seq <= upto satisfying ok.
	brute := func(floor uint64, ok func(change.Event) bool) (change.Txn, bool) {
		var out change.Txn
		found := false
		for _, e := range all {
			if e.Seq > floor && ok(e) {
				out, found = txnOf(&e), true
			}
		}
		return out, found
	}
	same := func(what string, got change.Txn, gotOK bool, err error, want change.Txn, wantOK bool) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if gotOK != wantOK || (wantOK && (got.Position != want.Position || !got.CommitTime.Equal(want.CommitTime))) {
			t.Fatalf("%s: got %+v %v, want %+v %v", what, got, gotOK, want, wantOK)
		}
	}
	for i := 0; i < 150; i++ {
		e := all[r.IntN(len(all))]
		// By time: exactly a commit time, just before it, between two.
		for _, tm := range []time.Time{e.CommitTime, e.CommitTime.Add(-time.Microsecond), e.CommitTime.Add(500 * time.Millisecond)} {
			got, ok, err := s.TxnAtTime(ctx, "lk", tm, 0, last)
			want, wok := brute(0, func(x change.Event) bool { return !x.CommitTime.After(tm) })
			same("time "+tm.String(), got, ok, err, want, wok)
		}
		// By position: the end, one before it, one after it; with a floor.
		for _, p := range []uint64{e.EndPos, e.EndPos - 1, e.EndPos + 1} {
			at := binlogpos.Position{File: e.BinlogFile, Pos: p}
			floor := uint64(r.IntN(int(e.Seq)))
			got, ok, err := s.TxnAtPos(ctx, "lk", at, floor, last)
			want, wok := brute(floor, func(x change.Event) bool {
				c, _ := binlogpos.Compare(x.Pos().Coords(), at)
				return c <= 0
			})
			same("position "+at.String(), got, ok, err, want, wok)
		}
		// By seq and by GTID: the transaction's last event.
		end, _ := brute(0, func(x change.Event) bool { return x.EndPos == e.EndPos && x.BinlogFile == e.BinlogFile })
		got, ok, err := s.TxnOfSeq(ctx, "lk", e.Seq, 0, last)
		same(fmt.Sprintf("seq %d", e.Seq), got, ok, err, end, true)
		got, ok, err = s.TxnOfGTID(ctx, "lk", e.GTID, 0, last)
		same("GTID "+e.GTID, got, ok, err, end, true)
		first, err := s.FirstSeqOf(ctx, "lk", end, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range all {
			if x.GTID == e.GTID {
				if x.Seq != first {
					t.Fatalf("first seq of %s: %d, want %d", e.GTID, first, x.Seq)
				}
				break
			}
		}
	}
	// Outside the index.
	if _, ok, err := s.TxnAtTime(ctx, "lk", base.Add(-time.Hour), 0, last); ok || err != nil {
		t.Fatalf("time before everything: %v %v", ok, err)
	}
	if _, ok, err := s.TxnOfGTID(ctx, "lk", fmt.Sprintf("0-1-%d", gtidN[0]+1), 0, last); ok || err != nil {
		t.Fatalf("future GTID: %v %v", ok, err)
	}
	if _, ok, err := s.TxnOfGTID(ctx, "lk", "5-1-1", 0, last); ok || err != nil {
		t.Fatalf("unknown domain: %v %v", ok, err)
	}
	if _, ok, err := s.TxnOfSeq(ctx, "lk", last+1, 0, last+10); ok || err != nil {
		t.Fatalf("seq past the end: %v %v", ok, err)
	}
}
