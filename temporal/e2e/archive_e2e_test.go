package e2e

import (
	"io"
	"slices"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/archive"
	"github.com/dbtrail/dbtrail/internal/change"
)

// TestArchiveRoundTrip: eight past hours of traffic (stamped with SET
// TIMESTAMP; two of them in p_before, the others in partitions of their
// own) and traffic of the current hour; an Archive run moves the eight
// hours to S3 and drops them from the index. The archive files and what
// the index still holds are every captured event exactly once, images
// byte-equal, in seq order. An event that lands in an archived hour
// afterwards is archived by the next run, with the hour's other events,
// and is not lost. The history file holds the schema history. Without an
// archive location a run archives and drops nothing.
func TestArchiveRoundTrip(t *testing.T) {
	e := newArchiveEnv(t)
	base := time.Now().UTC().Truncate(time.Hour).Add(-40 * time.Hour)
	must(t, e.store.SplitPartitions(e.ctx, change.HourID(base)+2))
	w := newWorkload(11)
	w.setup(t, e.backupEnv, 30)
	for k := range 8 {
		e.pastTraffic(t, w, base.Add(time.Duration(k)*time.Hour), 30)
	}
	for range 20 {
		w.step(t, e.backupEnv, 3)
	}
	e.waitCaughtUp(t)
	orig := indexEvents(t, e.ctx, e.store, "main")
	perHour := map[uint32]int{}
	for _, ev := range orig {
		perHour[change.HourID(ev.CommitTime)]++
	}
	for k := range 8 {
		if perHour[change.HourID(base)+uint32(k)] == 0 {
			t.Fatalf("no event stamped in hour %s: %v", base.Add(time.Duration(k)*time.Hour), perHour)
		}
	}

	// Without an archive location nothing is archived or dropped.
	e.acts.Remote = nil
	if res := e.runArchive(t, 24); res.Location != "" || len(res.Hours) != 0 || res.Reason == "" {
		t.Fatalf("archive without a location: %+v", res)
	}
	if n, err := e.store.CountEvents(e.ctx, "main"); err != nil || n != int64(len(orig)) {
		t.Fatalf("%d events left without an archive location, %d captured", n, len(orig))
	}
	e.acts.Remote = e.remote

	res := e.runArchive(t, 24)
	t.Logf("archived %d hours, %d events, %d bytes; %d events captured", len(res.Hours), res.Events, res.Bytes, len(orig))
	if len(res.Hours) != 8 || res.History == nil || res.History.Schemas == 0 {
		t.Fatalf("archive result %+v", res)
	}
	for i, h := range res.Hours {
		if !h.Hour.Equal(base.Add(time.Duration(i) * time.Hour)) {
			t.Fatalf("hour %d is %s", i, h.Hour)
		}
		dropped := h.Partition != ""
		if dropped != (i >= 2) || h.Events != int64(perHour[change.HourID(h.Hour)]) || h.Kept != "" {
			t.Fatalf("hour %s: %+v (%d events captured)", h.Hour, h, perHour[change.HourID(h.Hour)])
		}
	}
	left := indexEvents(t, e.ctx, e.store, "main")
	for _, ev := range left {
		if ev.CommitTime.Before(base.Add(8 * time.Hour)) {
			t.Fatalf("seq %d of an archived hour is still in the index", ev.Seq)
		}
	}
	stored, hours := storedEvents(t, e.ctx, e.remote, "main")
	if len(hours) != 8 {
		t.Fatalf("%d archive files", len(hours))
	}
	checkEveryEventOnce(t, orig, values(left), stored)
	parts, err := e.store.Partitions(e.ctx)
	must(t, err)
	for _, p := range parts {
		if p.Hourly() && p.Hour < change.HourID(base)+8 {
			t.Fatalf("partition %s of an archived hour is left", p.Name)
		}
	}
	recs, err := e.store.Archives(e.ctx, "main")
	must(t, err)
	if len(recs) != 8 || !recs[0].Confirmed() || recs[0].DroppedAt.IsZero() || recs[0].Location != e.remote.Location() {
		t.Fatalf("archive records %+v", recs)
	}
	rc, err := e.remote.Open(e.ctx, archive.HistoryName("main"))
	must(t, err)
	hb, err := io.ReadAll(rc)
	rc.Close()
	must(t, err)
	hist, err := archive.ParseHistory(hb, "main", "history.json")
	must(t, err)
	if len(hist.Schemas) < 5 || len(hist.Starts) != 1 {
		t.Fatalf("history: %d schema versions, %d starts", len(hist.Schemas), len(hist.Starts))
	}

	// An event lands in an archived hour (its partition is gone).
	late := base.Add(3 * time.Hour)
	e.stampHour(t, late, 3590)
	w.step(t, e.backupEnv, 2)
	e.stampHour(t, time.Time{}, 0)
	e.waitCaughtUp(t)
	all := indexEvents(t, e.ctx, e.store, "main")
	var lateSeqs []uint64
	for seq, ev := range all {
		orig[seq] = ev
		if change.HourID(ev.CommitTime) == change.HourID(late) {
			lateSeqs = append(lateSeqs, seq)
		}
	}
	if len(lateSeqs) == 0 {
		t.Fatal("no late event in the archived hour")
	}
	res2 := e.runArchive(t, 24)
	if len(res2.Hours) != 1 || !res2.Hours[0].Hour.Equal(late) ||
		res2.Hours[0].Events != int64(perHour[change.HourID(late)]+len(lateSeqs)) || res2.Hours[0].IndexEvents != int64(len(lateSeqs)) {
		t.Fatalf("second run %+v (late seqs %v)", res2.Hours, lateSeqs)
	}
	left = indexEvents(t, e.ctx, e.store, "main")
	stored, _ = storedEvents(t, e.ctx, e.remote, "main")
	got := checkEveryEventOnce(t, orig, values(left), stored)
	for _, seq := range lateSeqs {
		if _, ok := slices.BinarySearchFunc(got, seq, func(ev change.Event, s uint64) int { return int(ev.Seq) - int(s) }); !ok {
			t.Fatalf("late event %d lost", seq)
		}
	}
	if res3 := e.runArchive(t, 24); len(res3.Hours) != 0 {
		t.Fatalf("third run archived %+v", res3.Hours)
	}
}
