package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// TestFaultIndexKilledDuringCapture: under a steady write load on four
// connections, the index server is killed with SIGKILL while capture
// writes into it; capture stops and restarts with backoff while the index
// is down (its log says so), then resumes from its checkpoint once the
// server is back. Afterwards no gap is recorded, the index holds every seq
// once, and a refresh equals the source.
func TestFaultIndexKilledDuringCapture(t *testing.T) {
	t.Parallel()        // a waiting test (capture's backoff): see TestMain
	began := time.Now() // for the log only
	e, w := faultEnv(t, 61)
	t.Logf("servers and full backup: %s", time.Since(began).Round(time.Millisecond))
	load := startLoad(t, e, 4)
	e.waitIndexedPast(t, e.lastSeq(t)+300) // capture is writing the load
	must(t, e.index.Kill())
	t.Logf("index killed at %d transactions of load", load.commits.Load())
	e.capture.waitOutput(t, "capture stopped; restarting")
	t.Logf("capture restarting at %d transactions (%s)", load.commits.Load(), time.Since(began).Round(time.Millisecond))
	load.waitCommits(t, 200) // a backlog for capture while the index is down
	must(t, e.index.Restart(e.ctx))
	t.Logf("index restarted at %d transactions of load (%s)", load.commits.Load(), time.Since(began).Round(time.Millisecond))
	e.waitIndexedPast(t, e.lastSeq(t)+300)
	t.Logf("capture resumed (%s)", time.Since(began).Round(time.Millisecond))
	load.halt()
	e.waitCaughtUp(t)
	if e.capture.exited() {
		t.Fatalf("capture ended: %v\n%s", e.capture.err, e.capture.out.String())
	}
	checkIndexWhole(t, e)
	refreshEqualsSource(t, e, w, "refresh after the index was killed")
	t.Logf("load: %d transactions, %d failed", load.commits.Load(), load.errs.Load())
}

// TestFaultIndexKilledDuringRefresh: the index server is killed with
// SIGKILL while a refresh's RefreshTable runs (it folds a window of 60,000
// changes read from the index) and restarted once that step has failed.
// The refresh completes after its retries or fails cleanly (current still
// the previous snapshot, no staging left); the next refresh publishes and
// equals the source, and current never names an incomplete snapshot.
func TestFaultIndexKilledDuringRefresh(t *testing.T) {
	t.Parallel()        // a waiting test (retry backoff): see TestMain
	began := time.Now() // for the log only
	e := newBackupEnv(t, withOwnIndex(), withCaptureProcess())
	w := newWorkload(62)
	w.setup(t, e, 30)
	w.exec(t, e, `CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(60), n BIGINT)`)
	w.exec(t, e, `INSERT INTO big SELECT seq, CONCAT('row-', seq), seq FROM seq_1_to_60000`)
	e.waitCaughtUp(t)
	fb := e.fullBackup(t)
	t.Logf("servers and full backup: %s", time.Since(began).Round(time.Millisecond))
	checkWatch := watchCurrent(t, filepath.Join(e.acts.BackupDir, "main"))

	w.exec(t, e, "UPDATE big SET n = n + 1, pad = CONCAT(pad, '+')")
	w.step(t, e, 6)
	e.waitCaughtUp(t)
	id := payload.RefreshWorkflowID("main")
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: id, TaskQueue: payload.TaskQueue},
		workflows.Refresh, payload.RefreshInput{Source: "main", TableDeltas: true, NoFullBackup: true})
	must(t, err)
	if e.waitActivity(t, id, "RefreshTable", running) == nil {
		t.Fatal("the refresh ended before a RefreshTable ran")
	}
	must(t, e.index.Kill())
	t.Logf("index killed while RefreshTable runs (%s)", time.Since(began).Round(time.Millisecond))
	pa := e.waitActivity(t, id, "", failedOnce)
	if pa == nil {
		t.Fatal("no step of the refresh failed with the index down: the kill missed the fold")
	}
	t.Logf("while the index is down: %s", describeFailure(pa))
	must(t, e.index.Restart(e.ctx))
	t.Logf("index restarted (%s)", time.Since(began).Round(time.Millisecond))
	var res workflows.RefreshResult
	if err := run.Get(e.ctx, &res); err != nil {
		t.Logf("the refresh across the index kill failed: %v", err)
		checkNothingHalfDone(t, e, fb.SnapshotID)
	} else {
		if res.Refused {
			t.Fatalf("the refresh across the index kill was refused: %v", res.Reasons)
		}
		t.Logf("the refresh across the index kill completed: %s", res.SnapshotID)
		checkLive(t, e, newEngine(t), checkNothingHalfDone(t, e, res.SnapshotID), "refresh across the index kill")
	}
	e.waitCaughtUp(t)
	if e.capture.exited() {
		t.Fatalf("capture ended: %v\n%s", e.capture.err, e.capture.out.String())
	}
	checkIndexWhole(t, e)
	refreshEqualsSource(t, e, w, "refresh after the index came back")
	t.Logf("next refresh checked (%s)", time.Since(began).Round(time.Millisecond))
	if err := checkWatch(); err != nil {
		t.Fatal(err)
	}
}
