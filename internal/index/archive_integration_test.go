package index

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/testsuite"
)

// hourEvents returns n events of table committed in hour h, seqs from
// first, a transaction of 3 events each.
func hourEvents(h uint32, first uint64, n int, table string) []change.Event {
	var out []change.Event
	for i := range n {
		seq := first + uint64(i)
		e := ev(seq, table, fmt.Sprint(seq), change.OpInsert, fmt.Sprint(seq))
		e.CommitTime = change.HourTime(h).Add(time.Duration(1+i/3) * time.Second)
		e.EndPos = 1000 + uint64(i/3)*100
		out = append(out, e)
	}
	return out
}

// TestArchiveBookkeeping: migrations 5 and 6 on an index at version 4 keep
// its events and adds the archives and restores tables; records are written,
// confirmed only for the content they name, and listed.
func TestArchiveBookkeeping(t *testing.T) {
	srv := testsuite.StartIndex(t)
	ctx := context.Background()
	now := time.Now()
	db := migratedTo(t, srv, "dbtrail_v4", 4, now)
	s, err := Open(ctx, srv.DSN("dbtrail_v4"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.EnsurePartitions(ctx, now, DefaultAhead); err != nil {
		t.Fatal(err)
	}
	insertOlderChunks(t, db, "main", hourEvents(change.HourID(now), 1, 5, "t"))
	if err := s.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Init(ctx); err != nil {
		t.Fatalf("second Init: %v", err)
	}
	var version int
	if err := s.DB().QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&version); err != nil || version != SchemaVersionLatest() {
		t.Fatalf("schema version %d %v", version, err)
	}
	if n, err := s.CountEvents(ctx, "main"); err != nil || n != 5 {
		t.Fatalf("events after migrations 5 and 6: %d %v", n, err)
	}
	hour := change.HourID(now) - 30
	a := change.Archive{Source: "main", Hour: hour, Object: "main/archives/x.parquet", Location: "s3://b/p", Size: 10,
		SHA256: strings.Repeat("a", 64), Events: 3, FirstSeq: 1, LastSeq: 3}
	if err := s.RecordArchive(ctx, a); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.ConfirmArchive(ctx, "main", hour, strings.Repeat("b", 64), now); err != nil || ok {
		t.Fatalf("confirmed another content: %v %v", ok, err)
	}
	if ok, err := s.ConfirmArchive(ctx, "main", hour, a.SHA256, now); err != nil || !ok {
		t.Fatalf("confirm: %v %v", ok, err)
	}
	if ok, err := s.ConfirmArchive(ctx, "main", hour, a.SHA256, now); err != nil || !ok {
		t.Fatalf("confirm again: %v %v", ok, err)
	}
	if err := s.MarkDropped(ctx, "main", hour, now); err != nil {
		t.Fatal(err)
	}
	// The same content recorded again (a rerun after a crash between the
	// drop and its record) stays confirmed and dropped.
	if err := s.RecordArchive(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.ArchiveOf(ctx, "main", hour); err != nil || !ok || !got.Confirmed() || got.DroppedAt.IsZero() {
		t.Fatalf("the same content recorded again: %+v %v %v", got, ok, err)
	}
	a2 := a
	a2.SHA256, a2.Events = strings.Repeat("c", 64), 4
	if err := s.RecordArchive(ctx, a2); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.ArchiveOf(ctx, "main", hour)
	if err != nil || !ok || got.Confirmed() || got.DroppedAt.IsZero() || got.Events != 4 || got.Hour != hour {
		t.Fatalf("rewritten record %+v %v %v", got, ok, err)
	}
	list, err := s.Archives(ctx, "main")
	if err != nil || len(list) != 1 || list[0].Object != a.Object {
		t.Fatalf("archives %+v %v", list, err)
	}
	if size, err := s.Size(ctx); err != nil || size <= 0 {
		t.Fatalf("index size %d %v", size, err)
	}
}

// TestDropPartition: an hour is dropped only while its count equals the
// archived one; its partition goes when it holds nothing else, otherwise
// its chunks are deleted; p_before hours are deleted; empty old
// partitions go too.
func TestDropPartition(t *testing.T) {
	srv := testsuite.StartIndex(t)
	s := openStore(t, srv, "dbtrail_drop")
	ctx := context.Background()
	bound := firstPartitionBound(t, s)
	old := bound - 10
	if err := s.SplitPartitions(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := s.SplitPartitions(ctx, old); err != nil {
		t.Fatalf("split again: %v", err)
	}
	parts, err := s.Partitions(ctx)
	if err != nil || parts[1].Name != PartitionName(old) || parts[0].LessThan != old {
		t.Fatalf("partitions after split: %+v %v", parts[:3], err)
	}
	commitEvents(t, s, "main", hourEvents(old-3, 1, 10, "t")...) // p_before
	commitEvents(t, s, "main", hourEvents(old, 11, 20, "t")...)
	commitEvents(t, s, "main", hourEvents(old+1, 31, 20, "t")...)
	commitEvents(t, s, "other", hourEvents(old+1, 1, 5, "t")...)

	var hc *HourChangedError
	if _, err := s.DropPartition(ctx, "main", old, 19); !errors.As(err, &hc) || hc.Got != 20 {
		t.Fatalf("drop with a wrong count: %v", err)
	}
	if n, _ := s.CountHour(ctx, "main", old); n != 20 {
		t.Fatalf("refused drop removed events: %d left", n)
	}
	res, err := s.DropPartition(ctx, "main", old, 20)
	if err != nil || res.Partition != PartitionName(old) {
		t.Fatalf("drop own partition: %+v %v", res, err)
	}
	res, err = s.DropPartition(ctx, "main", old+1, 20)
	if err != nil || res.Partition != "" || res.Deleted == 0 {
		t.Fatalf("drop shared hour: %+v %v", res, err)
	}
	if n, _ := s.CountHour(ctx, "other", old+1); n != 5 {
		t.Fatalf("other source lost events: %d left", n)
	}
	res, err = s.DropPartition(ctx, "main", old-3, 10)
	if err != nil || res.Partition != "" || res.Deleted == 0 {
		t.Fatalf("drop p_before hour: %+v %v", res, err)
	}
	// A late event of the dropped hour lands in the next partition; that
	// partition is then shared, so dropping its own hour deletes instead.
	commitEvents(t, s, "main", hourEvents(old, 100, 1, "t")...)
	if n, _ := s.CountHour(ctx, "main", old); n != 1 {
		t.Fatalf("late event: %d", n)
	}
	res, err = s.DropPartition(ctx, "other", old+1, 5)
	if err != nil || res.Partition != "" {
		t.Fatalf("drop beside a late event: %+v %v", res, err)
	}
	if n, _ := s.CountHour(ctx, "main", old); n != 1 {
		t.Fatalf("late event lost: %d", n)
	}
	if res, err := s.DropPartition(ctx, "main", old+5, 0); err != nil || res.Events != 0 {
		t.Fatalf("empty hour: %+v %v", res, err)
	}
	dropped, err := s.DropEmptyPartitions(ctx, old+5)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{PartitionName(old + 2), PartitionName(old + 3), PartitionName(old + 4)}
	if !slices.Equal(dropped, want) {
		t.Fatalf("empty partitions dropped %v, want %v", dropped, want)
	}
	parts, _ = s.Partitions(ctx)
	if !slices.ContainsFunc(parts, func(p Partition) bool { return p.Name == PartitionName(old+1) }) {
		t.Fatalf("partition %s of the late event was dropped", PartitionName(old+1))
	}
}

// firstPartitionBound is p_before's bound.
func firstPartitionBound(t *testing.T, s *Store) uint32 {
	t.Helper()
	parts, err := s.Partitions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return parts[0].LessThan
}

// TestReindexHours: a restore begins only on an empty index, restores hours
// whose seqs interleave, each once, into chunks without holes, and ends
// with history and checkpoint in one step.
func TestReindexHours(t *testing.T) {
	srv := testsuite.StartIndex(t)
	s := openStore(t, srv, "dbtrail_restore")
	ctx := context.Background()
	commitEvents(t, s, "busy", ev(1, "t", "a", change.OpInsert, "1"))
	var ne *NotEmptyError
	if _, err := s.BeginReindex(ctx, "busy", "loc", nil); !errors.As(err, &ne) || ne.What != "events" {
		t.Fatalf("restore into a non-empty index: %v", err)
	}
	if resumed, err := s.BeginReindex(ctx, "main", "loc", nil); err != nil || resumed {
		t.Fatalf("begin: %v %v", resumed, err)
	}
	if resumed, err := s.BeginReindex(ctx, "main", "loc", nil); err != nil || !resumed {
		t.Fatalf("begin again: %v %v", resumed, err)
	}
	if _, err := s.BeginReindex(ctx, "main", "elsewhere", nil); !errors.As(err, &ne) {
		t.Fatalf("begin from another location: %v", err)
	}
	h := firstPartitionBound(t, s) - 5
	if err := s.SplitPartitions(ctx, h); err != nil {
		t.Fatal(err)
	}
	// Hour h holds seqs 1-10 and 21-25 (two tables), hour h+1 seqs 11-20;
	// seqs 26-30 are lost (a hole).
	hourA := append(hourEvents(h, 1, 10, "t"), hourEvents(h, 21, 5, "u")...)
	hourB := hourEvents(h+1, 11, 10, "t")
	for _, hr := range []struct {
		hour uint32
		evs  []change.Event
	}{{h + 1, hourB}, {h, hourA}} {
		a := change.Archive{Source: "main", Hour: hr.hour, Object: fmt.Sprintf("main/archives/%d.parquet", hr.hour), Location: "loc",
			SHA256: strings.Repeat("0", 64), Events: int64(len(hr.evs)), FirstSeq: hr.evs[0].Seq, LastSeq: hr.evs[len(hr.evs)-1].Seq, ConfirmedAt: time.Now()}
		yield := func(fn func(*change.Event) error) error {
			for i := range hr.evs {
				if err := fn(&hr.evs[i]); err != nil {
					return err
				}
			}
			return nil
		}
		if done, err := s.ReindexHour(ctx, a, nil, yield); err != nil || !done {
			t.Fatalf("restore %d: %v %v", hr.hour, done, err)
		}
		if done, err := s.ReindexHour(ctx, a, nil, yield); err != nil || done {
			t.Fatalf("restore %d again: %v %v", hr.hour, done, err)
		}
	}
	bad := change.Archive{Source: "main", Hour: h + 2, Events: 1, SHA256: strings.Repeat("0", 64)}
	if _, err := s.ReindexHour(ctx, bad, nil, func(fn func(*change.Event) error) error {
		e := hourEvents(h, 50, 1, "t")[0]
		return fn(&e)
	}); err == nil || !strings.Contains(err.Error(), "outside the hour") {
		t.Fatalf("event outside its hour: %v", err)
	}
	runs, err := s.SeqRuns(ctx, "main")
	if err != nil || !reflect.DeepEqual(runs, []SeqRun{{1, 25}}) {
		t.Fatalf("seq runs %+v %v", runs, err)
	}
	var chunks []SeqRun
	rows, err := s.DB().QueryContext(ctx, "SELECT first_seq, last_seq FROM event_chunks WHERE source = 'main' ORDER BY first_seq")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r SeqRun
		rows.Scan(&r.First, &r.Last)
		chunks = append(chunks, r)
	}
	rows.Close()
	if !reflect.DeepEqual(chunks, []SeqRun{{1, 10}, {11, 20}, {21, 25}}) {
		t.Fatalf("chunks %+v", chunks)
	}
	for _, want := range append(hourA, hourB...) {
		got, ok, err := s.EventAt(ctx, "main", want.Seq)
		if err != nil || !ok {
			t.Fatalf("event %d: %v %v", want.Seq, ok, err)
		}
		if !got.CommitTime.Equal(want.CommitTime) {
			t.Fatalf("event %d commit time %v, want %v", want.Seq, got.CommitTime, want.CommitTime)
		}
		got.CommitTime = want.CommitTime
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("event %d:\n got %+v\nwant %+v", want.Seq, got, want)
		}
	}
	if _, ok, _ := s.EventAt(ctx, "main", 26); ok {
		t.Fatal("event 26 found")
	}
	last := hourA[len(hourA)-1]
	fin := ReindexFinish{Checkpoint: change.Checkpoint{BinlogFile: last.BinlogFile, BinlogPos: last.EndPos, LastSeq: last.Seq, LastCommit: last.CommitTime},
		Gaps:  []change.Gap{{FromFile: "b.000001", FromPos: 4, ToFile: "b.000002", ToPos: 4, Reason: "test", DetectedAt: time.Now()}},
		Hours: 2, Events: 25, FirstSeq: 1, LastSeq: 25, Outcome: "resumes"}
	if done, err := s.FinishReindex(ctx, "main", nil, fin); err != nil || !done {
		t.Fatalf("finish: %v %v", done, err)
	}
	if done, err := s.FinishReindex(ctx, "main", nil, fin); err != nil || done {
		t.Fatalf("finish again: %v %v", done, err)
	}
	cp, ok, err := s.LoadCheckpoint(ctx, "main")
	if err != nil || !ok || cp.LastSeq != 25 {
		t.Fatalf("checkpoint %+v %v %v", cp, ok, err)
	}
	if gaps, err := s.Gaps(ctx, "main"); err != nil || len(gaps) != 1 {
		t.Fatalf("gaps %+v %v", gaps, err)
	}
	st, ok, err := s.ReindexStatus(ctx, "main")
	if err != nil || !ok || st.FinishedAt.IsZero() || st.Events != 25 {
		t.Fatalf("restore record %+v %v %v", st, ok, err)
	}
	if _, err := s.BeginReindex(ctx, "main", "loc", nil); !errors.As(err, &ne) {
		t.Fatalf("begin after a finished restore: %v", err)
	}
}
