package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
)

// TestFaultSourceKilledDuringCapture: under a steady write load on four
// connections, the source server is killed with SIGKILL while capture
// streams its binlog and restarted after capture has stopped and begun
// restarting with backoff; capture reconnects and resumes from its
// checkpoint. Afterwards no gap is recorded, the index holds every seq
// once, and a refresh equals the source (whatever of the load committed).
func TestFaultSourceKilledDuringCapture(t *testing.T) {
	t.Parallel()        // a waiting test (capture's backoff): see TestMain
	began := time.Now() // for the log only
	e, w := faultEnv(t, 63)
	t.Logf("servers and full backup: %s", time.Since(began).Round(time.Millisecond))
	load := startLoad(t, e, 4)
	e.waitIndexedPast(t, e.lastSeq(t)+300) // capture is streaming the load
	must(t, e.source.Kill())
	t.Logf("source killed at %d transactions of load", load.commits.Load())
	e.capture.waitOutput(t, "capture stopped; restarting")
	must(t, e.source.Restart(e.ctx))
	t.Logf("source restarted (%s)", time.Since(began).Round(time.Millisecond))
	load.waitCommits(t, 300)
	e.waitIndexedPast(t, e.lastSeq(t)+300)
	t.Logf("capture resumed (%s)", time.Since(began).Round(time.Millisecond))
	load.halt()
	e.waitCaughtUp(t)
	if e.capture.exited() {
		t.Fatalf("capture ended: %v\n%s", e.capture.err, e.capture.out.String())
	}
	checkIndexWhole(t, e)
	refreshEqualsSource(t, e, w, "refresh after the source was killed")
	t.Logf("load: %d transactions, %d failed while the source was down", load.commits.Load(), load.errs.Load())
}

// TestFaultSourceBinlogPurged: capture is down while the source changes,
// is killed with SIGKILL and restarted, and has its binlogs purged past
// capture's checkpoint. Capture, started again, records the gap and stops
// with the fix in its message; `dbtrail status` lists the gap. While it
// stops there a refresh publishes up to the gap's start (its window does
// not cross the gap). Capture restarted with --continue-past-gap goes on;
// a refresh across the gap is then refused naming the gap and publishes
// nothing (docs/workflows.md, "Refused plan"); allowed one, a full backup
// runs in its place and equals the source; the refresh after it pairs as
// usual and equals the source.
func TestFaultSourceBinlogPurged(t *testing.T) {
	began := time.Now() // for the log only
	e, w := faultEnv(t, 64)
	t.Logf("servers and full backup: %s", time.Since(began).Round(time.Millisecond))
	w.step(t, e, 6)
	e.waitCaughtUp(t)
	cp, _, err := e.store.LoadCheckpoint(e.ctx, "main")
	must(t, err)
	e.capture.kill()

	w.step(t, e, 6) // changes capture never reads
	must(t, e.source.Kill())
	must(t, e.source.Restart(e.ctx))
	oldest := e.purgeBinlogsBefore(t, cp.BinlogFile)
	w.step(t, e, 6)

	bin := buildDbtrail(t)
	p := startCaptureProc(t, bin, e)
	if err := p.waitExit(t); err == nil || !p.out.contains("capture gap") || !p.out.contains("Restart capture with --continue-past-gap") {
		t.Fatalf("capture over a purged binlog: %v\n%s", err, p.out.String())
	}
	gaps, err := e.store.Gaps(e.ctx, "main")
	must(t, err)
	if len(gaps) != 1 || gaps[0].FromFile != cp.BinlogFile || gaps[0].FromPos != cp.BinlogPos || gaps[0].ToFile != oldest {
		t.Fatalf("gaps %+v; want one from %s:%d to %s", gaps, cp.BinlogFile, cp.BinlogPos, oldest)
	}
	status := exec.Command(bin, "status")
	status.Env = append(os.Environ(), "DBTRAIL_INDEX_DSN="+e.indexDSN)
	out, err := status.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "GAP "+cp.BinlogFile) {
		t.Fatalf("dbtrail status does not list the gap: %v\n%s", err, out)
	}

	// Capture stopped at the gap: the cut is the gap's start, the window
	// does not cross it, and the refresh publishes the changes up to there,
	// no further.
	res := e.refresh(t, payload.RefreshInput{TableDeltas: true, NoFullBackup: true})
	if res.Refused || res.Position.File != cp.BinlogFile || res.Position.Pos != cp.BinlogPos {
		t.Fatalf("refresh while capture stops at the gap: %+v; want published at the gap's start %s:%d", res, cp.BinlogFile, cp.BinlogPos)
	}
	checkNothingHalfDone(t, e, res.SnapshotID)

	// Capture goes on past the gap: a refresh across it is refused naming
	// the gap and publishes nothing.
	e.capture = startCaptureProc(t, bin, e, "--continue-past-gap")
	e.waitCaughtUp(t)
	dir := filepath.Join(e.acts.BackupDir, "main")
	before, err := snapshot.ListSnapshots(dir)
	must(t, err)
	prev := res.SnapshotID
	res = e.refresh(t, payload.RefreshInput{TableDeltas: true, NoFullBackup: true})
	if !res.Refused || res.SnapshotID != "" || res.FullBackup != "" || !slices.ContainsFunc(res.Reasons, func(r string) bool {
		return strings.Contains(r, "crossed capture gap #")
	}) {
		t.Fatalf("refresh across the gap: %+v", res)
	}
	t.Logf("refresh across the gap refused: %v", res.Reasons)
	checkNothingHalfDone(t, e, prev)
	if after, err := snapshot.ListSnapshots(dir); err != nil || !slices.Equal(after, before) {
		t.Fatalf("snapshots %v after the refused refresh, %v before (%v)", after, before, err)
	}

	// With a full backup allowed, one runs in the refresh's place.
	res = e.refresh(t, payload.RefreshInput{TableDeltas: true})
	if !res.Refused || res.FullBackup == "" || res.SnapshotID != "" {
		t.Fatalf("refresh across the gap with a full backup allowed: %+v", res)
	}
	checkLive(t, e, newEngine(t), checkNothingHalfDone(t, e, res.FullBackup), "full backup in place of the refused refresh")
	refreshEqualsSource(t, e, w, "refresh after the full backup")
	if gaps, _ := e.store.Gaps(e.ctx, "main"); len(gaps) != 1 {
		t.Fatalf("gaps after the restart past it: %+v", gaps)
	}
	t.Logf("done (%s)", time.Since(began).Round(time.Millisecond))
}
