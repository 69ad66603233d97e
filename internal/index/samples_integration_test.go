package index

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/testsuite"
)

// TestCaptureSamples: a source without a checkpoint records nothing; each
// record samples the checkpoint as it is (no commit yet: no lag; then the
// commit's time), other sources apart; samples older than
// CaptureSampleKeep go at the next record of their source; an index that
// predates the table answers ErrNoCaptureSamples.
func TestCaptureSamples(t *testing.T) {
	srv := testsuite.StartIndex(t)
	s := openStore(t, srv, "dbtrail_samples")
	ctx := context.Background()
	save := func(source string, cp change.Checkpoint) {
		t.Helper()
		tx, err := s.Begin(ctx, source, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.SaveCheckpoint(ctx, cp); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	rec := func(source string) {
		t.Helper()
		if err := s.RecordCaptureSample(ctx, source); err != nil {
			t.Fatal(err)
		}
	}
	list := func(source string) []CaptureSample {
		t.Helper()
		cs, err := s.CaptureSamples(ctx, source, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	rec("main")
	if got := list("main"); len(got) != 0 {
		t.Fatalf("samples without a checkpoint: %+v", got)
	}
	save("main", change.Checkpoint{BinlogFile: "b.000001", BinlogPos: 4, LastSeq: 0})
	rec("main")
	commit := time.Now().UTC().Add(-3 * time.Second).Truncate(time.Microsecond)
	save("main", change.Checkpoint{BinlogFile: "b.000001", BinlogPos: 100, LastSeq: 7, LastCommit: commit})
	rec("main")
	save("other", change.Checkpoint{BinlogFile: "b.000001", BinlogPos: 100, LastSeq: 99, LastCommit: commit})
	rec("other")
	got := list("main")
	if len(got) != 2 || got[0].LastSeq != 0 || got[1].LastSeq != 7 || !got[1].LastCommit.Equal(commit) || !got[0].At.Before(got[1].At) {
		t.Fatalf("samples of main: %+v", got)
	}
	if _, ok := got[0].Lag(); ok {
		t.Errorf("a sample before the first commit has a lag")
	}
	if lag, ok := got[1].Lag(); !ok || lag < 3*time.Second || lag > time.Minute {
		t.Errorf("the lag of a sample 3 s after its commit: %v %v", lag, ok)
	}
	if other := list("other"); len(other) != 1 || other[0].LastSeq != 99 {
		t.Errorf("samples of other: %+v", other)
	}
	if _, err := s.DB().ExecContext(ctx, "UPDATE capture_samples SET sampled_at = UTC_TIMESTAMP(6) - INTERVAL 8 DAY WHERE source = 'main' AND last_seq = 0"); err != nil {
		t.Fatal(err)
	}
	rec("main")
	if cs, err := s.CaptureSamples(ctx, "main", 30*24*time.Hour); err != nil || len(cs) != 2 || cs[0].LastSeq != 7 {
		t.Errorf("after a record, the sample older than the keep: %+v %v", cs, err)
	}
	if _, err := s.DB().ExecContext(ctx, "DROP TABLE capture_samples"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CaptureSamples(ctx, "main", time.Hour); !errors.Is(err, ErrNoCaptureSamples) {
		t.Errorf("an index without capture_samples: %v, want ErrNoCaptureSamples", err)
	}
}
