package moment

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/archive"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/internal/when"
	"github.com/dbtrail/dbtrail/testsuite"
)

// countingStore counts the bytes read through OpenReaderAt.
type countingStore struct {
	storage.Store
	read *atomic.Int64
}

func (c countingStore) OpenReaderAt(ctx context.Context, name string) (storage.ReaderAt, error) {
	ra, err := c.Store.OpenReaderAt(ctx, name)
	if err != nil {
		return nil, err
	}
	return countingReader{ReaderAt: ra, read: c.read}, nil
}

type countingReader struct {
	storage.ReaderAt
	read *atomic.Int64
}

func (c countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.ReaderAt.ReadAt(p, off)
	c.read.Add(int64(n))
	return n, err
}

// lookupStream is a captured stream of six hours: transactions of one to
// three events of three tables, binlog files rotating every two hours,
// one GTID per transaction.
func lookupStream(hour0 uint32) []change.Event {
	rng := rand.New(rand.NewPCG(7, 11))
	var out []change.Event
	seq, gtid := uint64(0), 0
	for h := range uint32(6) {
		file := fmt.Sprintf("binlog.%06d", 1+h/2)
		pos := uint64(4)
		for txn := range 120 {
			gtid++
			pos += 100 + uint64(rng.IntN(300))
			commit := change.HourTime(hour0 + h).Add(time.Duration(txn*25) * time.Second)
			for range 1 + rng.IntN(3) {
				seq++
				tbl := []string{"a", "b", "c"}[rng.IntN(3)]
				out = append(out, change.Event{Seq: seq, CommitTime: commit, BinlogFile: file, EndPos: pos,
					GTID: fmt.Sprintf("0-1-%d", gtid), Schema: "shop", Table: tbl, Op: change.OpInsert,
					PK: fmt.Sprintf("[%d]", seq), SchemaVersion: 1, After: fmt.Appendf(nil, `{"id":%d}`, seq)})
			}
		}
	}
	return out
}

// lookupProbe is one lookup and the answer the whole index gave.
type lookupProbe struct {
	what  string
	run   func(ix Index) (change.Txn, bool, error)
	want  change.Txn
	found bool
}

// TestLookupsOverArchivedHours: a stream of six hours is stored in the
// index and every lookup (time, position, seq, GTID, a transaction's first
// seq) is answered; then the four oldest hours are archived (files with
// small row groups on a local store, recorded, confirmed) and dropped from
// the index (a fifth is archived and kept in it). Past.Lookup answers every lookup, and Past.ChangeCounts
// counts every range's changes, as the whole index did,
// reading a fraction of the archive's bytes for one lookup; with the
// store's files gone, or with no store, a moment inside an archived hour is
// refused naming an archived hour it needed (never cut at the capture
// start), while a moment
// in the index window still resolves.
func TestLookupsOverArchivedHours(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv := testsuite.StartIndex(t)
	must(t, srv.Exec(ctx, "CREATE DATABASE dbtrail"))
	store, err := index.Open(ctx, srv.DSN("dbtrail"))
	must(t, err)
	defer store.Close()
	must(t, store.Init(ctx))
	hour0 := change.HourID(time.Now()) - 30
	must(t, store.SplitPartitions(ctx, hour0))
	evs := lookupStream(hour0)
	tx, err := store.Begin(ctx, "main", nil)
	must(t, err)
	must(t, tx.InsertEvents(ctx, evs))
	last := evs[len(evs)-1]
	must(t, tx.SaveCheckpoint(ctx, change.Checkpoint{Source: "main", BinlogFile: last.BinlogFile, BinlogPos: last.EndPos,
		GTID: last.GTID, LastSeq: last.Seq, LastCommit: last.CommitTime}))
	must(t, tx.Commit())
	upto := last.Seq

	// The answers of the whole index.
	rng := rand.New(rand.NewPCG(3, 5))
	var probes []*lookupProbe
	add := func(what string, run func(ix Index) (change.Txn, bool, error)) {
		probes = append(probes, &lookupProbe{what: what, run: run})
	}
	for range 40 {
		tm := change.HourTime(hour0).Add(time.Duration(rng.IntN(6*3600+60)-30) * time.Second)
		add("time "+tm.Format(time.RFC3339), func(ix Index) (change.Txn, bool, error) { return ix.TxnAtTime(ctx, "main", tm, 0, upto) })
		e := evs[rng.IntN(len(evs))]
		p := binlogpos.Position{File: e.BinlogFile, Pos: e.EndPos - uint64(rng.IntN(2)*50)}
		add("position "+p.String(), func(ix Index) (change.Txn, bool, error) { return ix.TxnAtPos(ctx, "main", p, 0, upto) })
		s := uint64(1 + rng.IntN(int(upto)))
		add(fmt.Sprintf("seq %d", s), func(ix Index) (change.Txn, bool, error) { return ix.TxnOfSeq(ctx, "main", s, 0, upto) })
		g := evs[rng.IntN(len(evs))].GTID
		add("gtid "+g, func(ix Index) (change.Txn, bool, error) { return ix.TxnOfGTID(ctx, "main", g, 0, upto) })
		add("first seq of the txn of "+g, func(ix Index) (change.Txn, bool, error) {
			txn, ok, err := ix.TxnOfGTID(ctx, "main", g, 0, upto)
			if err != nil || !ok {
				return txn, ok, err
			}
			first, err := ix.FirstSeqOf(ctx, "main", txn, 0)
			return change.Txn{Position: binlogpos.Position{Seq: first}}, true, err
		})
	}
	add("position before the stream", func(ix Index) (change.Txn, bool, error) {
		return ix.TxnAtPos(ctx, "main", binlogpos.Position{File: "binlog.000001", Pos: 5}, 0, upto)
	})
	add("gtid not captured", func(ix Index) (change.Txn, bool, error) { return ix.TxnOfGTID(ctx, "main", "0-1-99999", 0, upto) })
	for _, p := range probes {
		var err error
		p.want, p.found, err = p.run(store)
		must(t, err)
	}

	ranges := [][2]uint64{{0, upto}, {upto / 5, upto / 2}, {upto / 3, upto - 7}, {upto / 2, upto / 2}}
	wantCounts := make([]map[[2]string]int64, len(ranges))
	for i, r := range ranges {
		var err error
		wantCounts[i], err = store.ChangeCounts(ctx, "main", r[0], r[1])
		must(t, err)
	}

	// Archive and drop the four oldest hours.
	dir := t.TempDir()
	local, err := storage.NewLocal(dir)
	must(t, err)
	total := int64(0)
	var archived []uint32
	for h := range uint32(5) {
		hour := hour0 + h
		var hevs []change.Event
		for _, e := range evs {
			if change.HourID(e.CommitTime) == hour {
				hevs = append(hevs, e)
			}
		}
		slices.SortStableFunc(hevs, func(a, b change.Event) int { return strings.Compare(a.Table, b.Table) })
		var buf bytes.Buffer
		w, err := archive.NewWriter(&buf, "main", change.HourTime(hour), archive.WriterOptions{RowGroupRows: 16})
		must(t, err)
		for i := range hevs {
			must(t, w.Append(&hevs[i]))
		}
		res, err := w.Close()
		must(t, err)
		name := archive.ObjectName("main", change.HourTime(hour))
		sum := sha256.Sum256(buf.Bytes())
		d := digest.Digest{SHA256: hex.EncodeToString(sum[:]), Size: int64(buf.Len())}
		must(t, local.Put(ctx, name, bytes.NewReader(buf.Bytes()), d))
		a := change.Archive{Source: "main", Hour: hour, Object: name, Location: local.Location(), Size: d.Size,
			SHA256: d.SHA256, Events: int64(len(hevs)), FirstSeq: res.Footer.FirstSeq, LastSeq: res.Footer.LastSeq}
		must(t, store.RecordArchive(ctx, a))
		if ok, err := store.ConfirmArchive(ctx, "main", hour, d.SHA256, time.Now()); err != nil || !ok {
			t.Fatalf("confirm hour %d: %v %v", hour, ok, err)
		}
		if h == 4 {
			continue // archived and confirmed, still in the index
		}
		if _, err := store.DropPartition(ctx, "main", hour, int64(len(hevs))); err != nil {
			t.Fatal(err)
		}
		must(t, store.MarkDropped(ctx, "main", hour, time.Now()))
		total += int64(buf.Len())
		archived = append(archived, hour)
	}
	if n, err := store.CountEvents(ctx, "main"); err != nil || n >= int64(len(evs)) {
		t.Fatalf("the index still holds %d of %d events (%v)", n, len(evs), err)
	}

	var read atomic.Int64
	past := Past{Source: "main", Index: store, Archive: countingStore{Store: local, read: &read}}
	lk := past.Lookup()
	for _, p := range probes {
		got, found, err := p.run(lk)
		if err != nil {
			t.Fatalf("%s over the archives: %v", p.what, err)
		}
		if found != p.found || got.Position != p.want.Position || !got.CommitTime.Equal(p.want.CommitTime) {
			t.Errorf("%s: got %v %v, the whole index said %v %v", p.what, found, got, p.found, p.want)
		}
	}
	for i, r := range ranges {
		got, err := past.ChangeCounts(ctx, r[0], r[1])
		must(t, err)
		flat := map[[2]string]int64{}
		for k, n := range got {
			if n != 0 {
				flat[[2]string{k.Schema, k.Table}] = n
			}
		}
		if fmt.Sprint(flat) != fmt.Sprint(wantCounts[i]) {
			t.Errorf("change counts of (%d, %d]: %v, the whole index said %v", r[0], r[1], flat, wantCounts[i])
		}
	}
	read.Store(0)
	mid := evs[len(evs)/3]
	if _, ok, err := lk.TxnAtPos(ctx, "main", mid.Pos().Coords(), 0, upto); err != nil || !ok {
		t.Fatalf("position lookup: %v %v", ok, err)
	}
	// Footers (Parquet's row group metadata) are most of what it reads of
	// files this small.
	if r := read.Load(); r*5 > total*2 {
		t.Errorf("one position lookup read %d of the archive's %d bytes; want at most 40%%", r, total)
	}

	// An archived hour that cannot be read refuses the moment, naming it.
	f := Facts{Source: "main", Captured: true, Checkpoint: change.Checkpoint{Source: "main", BinlogFile: last.BinlogFile,
		BinlogPos: last.EndPos, LastSeq: upto, LastCommit: last.CommitTime},
		Starts: []change.Start{{Source: "main", Position: binlogpos.Position{File: "binlog.000001", Pos: 4}}}}
	inside := evs[len(evs)/4]
	atPos := when.At{Kind: when.KindPos, Pos: inside.Pos().Coords()}
	atTime := when.At{Kind: when.KindTime, Time: inside.CommitTime}
	recent := evs[len(evs)-10]
	atRecent := when.At{Kind: when.KindPos, Pos: recent.Pos().Coords()}
	empty, err := storage.NewLocal(t.TempDir())
	must(t, err)
	for name, p := range map[string]Past{
		"files missing":       {Source: "main", Index: store, Archive: empty},
		"no archive location": {Source: "main", Index: store},
	} {
		for _, at := range []when.At{atPos, atTime} {
			_, err := Resolve(ctx, p.Lookup(), f, at, false)
			r, ok := IsRefused(err)
			// The search names the first archived hour it needed.
			if !ok || r.Code != CodeArchive || !slices.ContainsFunc(archived, func(h uint32) bool {
				return strings.Contains(r.Reason, "archived hour "+change.HourTime(h).Format("2006-01-02T15Z"))
			}) {
				t.Errorf("%s, %s: %v; want a refusal naming an archived hour", name, at, err)
			}
		}
		// An hour archived but still whole in the index needs no location
		// (with one, a broken store may still refuse it).
		var kept change.Event
		for _, e := range evs {
			if change.HourID(e.CommitTime) == hour0+4 && e.Seq > kept.Seq && e.CommitTime.Before(change.HourTime(hour0+4).Add(30*time.Minute)) {
				kept = e
			}
		}
		if _, err := Resolve(ctx, p.Lookup(), f, when.At{Kind: when.KindTime, Time: kept.CommitTime}, false); p.Archive == nil && err != nil {
			t.Errorf("%s, a time in an archived hour the index still holds: %v", name, err)
		}
		cut, err := Resolve(ctx, p.Lookup(), f, atRecent, false)
		if err != nil || cut.Seq != recent.Seq+uint64(countTail(evs, recent)) {
			t.Errorf("%s, a moment in the index window: %v %v", name, cut, err)
		}
	}
	var he *HourError
	_, _, err = Past{Source: "main", Index: store, Archive: empty}.Lookup().TxnOfSeq(ctx, "main", inside.Seq, 0, upto)
	if !errors.As(err, &he) || !slices.Contains(archived, he.Hour.Hour) {
		t.Errorf("seq inside a missing archived hour: %v", err)
	}
}

// countTail is how many events after e share its transaction.
func countTail(evs []change.Event, e change.Event) int {
	n := 0
	for _, x := range evs {
		if x.Seq > e.Seq && x.EndPos == e.EndPos && x.BinlogFile == e.BinlogFile {
			n++
		}
	}
	return n
}
