package capture_test

import (
	"errors"
	"testing"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/index"
)

// TestSeqAtMapsDumpPositions: a binlog position maps to the seq of the last
// captured transaction at or before it; a position before capture started is
// refused; one capture has not reached yet waits.
func TestSeqAtMapsDumpPositions(t *testing.T) {
	e := newEnv(t)
	e.exec("CREATE TABLE m (id INT PRIMARY KEY)")
	before := masterStatus(t, e)
	e.exec("INSERT INTO m VALUES (1)")
	p := e.startCapture()
	e.waitCaughtUp(p)
	e.exec("INSERT INTO m VALUES (2), (3)")
	mid := masterStatus(t, e)
	e.exec("INSERT INTO m VALUES (4)")
	e.waitCaughtUp(p)

	if seq, err := e.store.SeqAt(e.ctx, "main", mid); err != nil || seq != 2 {
		t.Fatalf("SeqAt(%s) = %d, %v; want 2 (rows 2 and 3)", mid, seq, err)
	}
	var nc *index.NotCoveredError
	if _, err := e.store.SeqAt(e.ctx, "main", before); !errors.As(err, &nc) {
		t.Fatalf("a position before capture started must not be covered, got %v", err)
	}
	future := binlogpos.Position{File: mid.File, Pos: mid.Pos + 1_000_000}
	if _, err := e.store.SeqAt(e.ctx, "main", future); !errors.Is(err, index.ErrNotCaughtUp) {
		t.Fatalf("a position capture has not reached must say so, got %v", err)
	}
	// With no traffic, a rotation still moves the checkpoint to the
	// source's position: a backup waiting for capture is not stuck.
	e.exec("FLUSH BINARY LOGS")
	cp := e.waitCaughtUp(p)
	if now := masterStatus(t, e); cp.BinlogFile != now.File {
		t.Fatalf("checkpoint %s:%d did not follow the rotation to %s", cp.BinlogFile, cp.BinlogPos, now)
	}
	if seq, err := e.store.SeqAt(e.ctx, "main", masterStatus(t, e)); err != nil || seq != 3 {
		t.Fatalf("SeqAt(after rotation) = %d, %v; want 3", seq, err)
	}
	starts, err := e.store.Starts(e.ctx, "main")
	if err != nil || len(starts) != 1 || starts[0].Reason != "first start" {
		t.Fatalf("starts = %+v, %v", starts, err)
	}
}
