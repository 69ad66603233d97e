package capture_test

import (
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
)

// TestCaptureRefusedDuringRestore: `dbtrail capture` on an index with an
// unfinished reindex of the source stops at once, naming the restore
// (location and start time), and writes nothing; once the restore is
// finished (its checkpoint written), capture starts from there.
func TestCaptureRefusedDuringRestore(t *testing.T) {
	e := newEnv(t)
	if _, err := e.store.BeginReindex(e.ctx, "main", "s3://bucket/archives", nil); err != nil {
		t.Fatal(err)
	}
	rs, _, err := e.store.ReindexStatus(e.ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	p := e.startCapture()
	if err := p.waitExit(t, 2*time.Minute); err == nil {
		t.Fatalf("capture during a restore exited cleanly:\n%s", p.output())
	}
	want := "reindex of source main from s3://bucket/archives, begun at " + rs.StartedAt.UTC().Format(time.RFC3339) + ", is unfinished"
	if out := p.output(); !strings.Contains(out, want) || strings.Contains(out, "restarting") {
		t.Fatalf("capture during a restore: want %q once, without a restart; output:\n%s", want, out)
	}
	if _, ok, err := e.store.LoadCheckpoint(e.ctx, "main"); err != nil || ok {
		t.Fatalf("checkpoint written by a refused capture: %v %v", ok, err)
	}
	if starts, err := e.store.Starts(e.ctx, "main"); err != nil || len(starts) != 0 {
		t.Fatalf("starts recorded by a refused capture: %+v %v", starts, err)
	}

	// The restore finishes at the source's current position; capture
	// resumes there.
	var file string
	var pos uint64
	var a, b any
	if err := e.src.QueryRowContext(e.ctx, "SHOW MASTER STATUS").Scan(&file, &pos, &a, &b); err != nil {
		t.Fatal(err)
	}
	fin := index.ReindexFinish{Checkpoint: change.Checkpoint{Source: "main", BinlogFile: file, BinlogPos: pos, LastCommit: time.Now().UTC()},
		Outcome: "test"}
	if done, err := e.store.FinishReindex(e.ctx, "main", nil, fin); err != nil || !done {
		t.Fatalf("finish: %v %v", done, err)
	}
	p = e.startCapture()
	e.exec("CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
	e.waitCaughtUp(p)
	if evs := e.events("t"); len(evs) != 1 {
		t.Fatalf("events after the restore: %+v\n%s", evs, p.output())
	}
}
