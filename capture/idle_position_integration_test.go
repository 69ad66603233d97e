package capture_test

import (
	"testing"
	"time"
)

// TestIdleCheckpointIsTheSourcePosition: capture started on a source with
// no traffic moves its idle checkpoint to the source's binlog position,
// not past it (the format description MariaDB re-sends at the stream's
// start carries no position of its own), and a restart resumes from it and
// captures what follows.
func TestIdleCheckpointIsTheSourcePosition(t *testing.T) {
	e := newEnv(t)
	e.exec("CREATE TABLE m (id INT PRIMARY KEY)")
	want := masterStatus(t, e)
	p := e.startCapture()
	deadline := time.Now().Add(time.Minute)
	for {
		cp, ok, err := e.store.LoadCheckpoint(e.ctx, "main")
		if err != nil {
			t.Fatal(err)
		}
		if ok && cp.BinlogFile == want.File && cp.BinlogPos != 0 && cp.BinlogPos != 4 {
			if cp.BinlogPos != want.Pos {
				t.Fatalf("idle checkpoint %s:%d; the source is at %s", cp.BinlogFile, cp.BinlogPos, want)
			}
			break
		}
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("no idle checkpoint at %s (last %+v, found %v); output:\n%s", want, cp, ok, p.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Let the idle loop run a few more times: it must not move it either.
	time.Sleep(3 * time.Second)
	if cp, _, err := e.store.LoadCheckpoint(e.ctx, "main"); err != nil || cp.BinlogPos != want.Pos {
		t.Fatalf("idle checkpoint moved to %s:%d (%v); the source is at %s", cp.BinlogFile, cp.BinlogPos, err, want)
	}
	p.kill()
	p = e.startCapture()
	e.exec("INSERT INTO m VALUES (1)")
	e.waitCaughtUp(p)
	if evs := e.events("m"); len(evs) != 1 {
		t.Fatalf("after a restart from the idle checkpoint: %d events of m, want 1; output:\n%s", len(evs), p.output())
	}
}
