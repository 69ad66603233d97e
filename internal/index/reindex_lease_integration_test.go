package index

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/testsuite"
)

// TestRestoreExcludesCapture: a restore step cannot take the lease a
// capture holds (ErrLeaseHeld, naming the holder); a capture holding the
// lease is refused while a restore is unfinished (naming it, its location
// and start time) and allowed once it finished; a restore step whose lease
// was lost commits nothing.
func TestRestoreExcludesCapture(t *testing.T) {
	srv := testsuite.StartIndex(t)
	s := openStore(t, srv, "dbtrail_restore_lease")
	ctx := context.Background()

	capLease, err := s.AcquireLease(ctx, "main", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.TryLease(ctx, "main", 0)
	if !errors.Is(err, ErrLeaseHeld) || !strings.Contains(err.Error(), fmt.Sprintf("connection %d", capLease.ConnID())) {
		t.Fatalf("TryLease while capture holds the lease: %v", err)
	}
	if err := s.CheckNoReindex(ctx, "main"); err != nil {
		t.Fatalf("capture without a restore: %v", err)
	}
	capLease.Release()

	lease, err := s.TryLease(ctx, "main", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if resumed, err := s.BeginReindex(ctx, "main", "loc", lease); err != nil || resumed {
		t.Fatalf("begin: %v %v", resumed, err)
	}
	lease.Release()
	st, _, err := s.ReindexStatus(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}

	// Between two restore steps the lease is free; capture takes it and
	// is refused, naming the restore.
	capLease, err = s.AcquireLease(ctx, "main", nil)
	if err != nil {
		t.Fatal(err)
	}
	err = s.CheckNoReindex(ctx, "main")
	var ue *UnfinishedReindexError
	if !errors.As(err, &ue) || !ue.Restore.StartedAt.Equal(st.StartedAt) ||
		!strings.Contains(err.Error(), "from loc, begun at "+st.StartedAt.UTC().Format(time.RFC3339)) {
		t.Fatalf("capture during a restore: %v", err)
	}
	capLease.Release()

	// A step whose lease is lost (released here; a dead connection in
	// production) commits nothing.
	h := firstPartitionBound(t, s) - 3
	if err := s.SplitPartitions(ctx, h); err != nil {
		t.Fatal(err)
	}
	evs := hourEvents(h, 1, 6, "t")
	a := change.Archive{Source: "main", Hour: h, Object: "main/archives/h.parquet", Location: "loc", SHA256: strings.Repeat("0", 64),
		Events: int64(len(evs)), FirstSeq: 1, LastSeq: 6, ConfirmedAt: time.Now()}
	yield := func(fn func(*change.Event) error) error {
		for i := range evs {
			if err := fn(&evs[i]); err != nil {
				return err
			}
		}
		return nil
	}
	lost, err := s.TryLease(ctx, "main", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lost.Release()
	if _, err := s.ReindexHour(ctx, a, lost, yield); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("restore of an hour without the lease: %v", err)
	}
	if _, found, err := s.ArchiveOf(ctx, "main", h); err != nil || found {
		t.Fatalf("hour restored without the lease: %v %v", found, err)
	}
	if _, err := s.BeginReindex(ctx, "other", "loc", lost); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("begin without the lease: %v", err)
	}
	if _, found, err := s.ReindexStatus(ctx, "other"); err != nil || found {
		t.Fatalf("restore begun without the lease: %v %v", found, err)
	}

	lease, err = s.TryLease(ctx, "main", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if done, err := s.ReindexHour(ctx, a, lease, yield); err != nil || !done {
		t.Fatalf("restore of the hour: %v %v", done, err)
	}
	last := evs[len(evs)-1]
	fin := ReindexFinish{Checkpoint: change.Checkpoint{BinlogFile: last.BinlogFile, BinlogPos: last.EndPos, LastSeq: last.Seq, LastCommit: last.CommitTime},
		Hours: 1, Events: 6, FirstSeq: 1, LastSeq: 6, Outcome: "resumes"}
	if done, err := s.FinishReindex(ctx, "main", lease, fin); err != nil || !done {
		t.Fatalf("finish: %v %v", done, err)
	}
	lease.Release()
	if err := s.CheckNoReindex(ctx, "main"); err != nil {
		t.Fatalf("capture after the restore finished: %v", err)
	}
}
