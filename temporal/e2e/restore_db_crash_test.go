package e2e

import (
	"database/sql"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/internal/throttle"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workflows"
)

// TestRestoreSurvivesWorkerKills kills the worker process with SIGKILL ten
// times or more while it restores a keyed and a keyless table; a new worker
// starts after each. The kills go on until one LoadTable call has lost all
// its MaxAttempts attempts (kills land on the calls in flight, and a call
// whose attempts each die after a chunk never ends its slice): the
// workflow calls it again, since its rows moved (loadLost). Each kill is
// aimed at chunk commits: it comes right after the target's parts
// checkpoints counted one more chunk of every table still loading, and
// counts only if a LoadTable attempt was in flight
// (the workflow's pending activities) and that attempt was then retried
// (a later attempt started, in the pending activities or the history),
// never completed. The restore finishes and verifies, and the target's
// tables equal the source at the moment: no row loaded twice (the keyless
// table's duplicates counted), none missing. `dbtrail restore` of the
// same moment then writes 0 rows.
func TestRestoreSurvivesWorkerKills(t *testing.T) {
	t.Parallel() // a waiting test: see TestMain
	bin := buildDbtrail(t)
	e := newBackupEnv(t, withoutWorker())
	must(t, e.source.Exec(e.ctx,
		`CREATE TABLE app.big (id INT PRIMARY KEY, pad VARCHAR(60), n BIGINT)`,
		`USE app; INSERT INTO app.big SELECT seq, CONCAT('row-', seq, REPEAT('x', seq % 40)), seq * 7 FROM seq_1_to_60000`,
		`CREATE TABLE app.bag (a INT, b VARCHAR(10))`,
		`USE app; INSERT INTO app.bag SELECT seq % 5000, IF(seq % 3 = 0, NULL, 'x') FROM seq_1_to_20000`,
	))
	// Parts of 10,000 rows: app.big (60,000 rows, keyed) loads as two key
	// ranges at once, each with its own checkpoint; app.bag (no key) as one.
	target := testsuite.StartTarget(t, 51)
	ref := e.target(t, target)
	targets := e.targetsFile(t)
	startWorker := func() *workerProc {
		return startWorkerCmd(t, bin, e.frontend, e, e.indexDSN, "--backup-dir", e.acts.BackupDir, "--work-dir", e.acts.WorkDir, "--restore-part-rows", "10000",
			"--restore-targets", targets)
	}
	w := startWorker()
	e.waitCaughtUp(t)
	e.fullBackup(t)
	must(t, e.source.Exec(e.ctx, `UPDATE app.big SET n = -n WHERE id % 3 = 0`, `DELETE FROM app.bag WHERE a < 100`))
	e.waitCaughtUp(t)
	cp, _, err := e.store.LoadCheckpoint(e.ctx, "main")
	must(t, err)
	at := "seq:" + strconv.FormatUint(cp.LastSeq, 10)
	want := e.liveFingerprints(t, e.src, "app", "big", "bag")

	// Slices of 30 s: a LoadTable call outlives the kills, so each kill
	// costs both calls an attempt, and the tenth their last.
	run := e.startRestore(t, target, payload.RestoreInput{Slice: 30 * time.Second, Parallel: 4, RestoreSpec: payload.RestoreSpec{
		At: at, Schemas: []string{"app"}, Target: ref, Limits: throttle.Limits{MaxRowsPerSecond: 1500}}})
	tdb, err := target.DB(e.ctx, "")
	must(t, err)
	defer tdb.Close()
	chunks := map[string]int64{} // by table, at the last kill
	exhausted := false           // a LoadTable lost all its attempts, then was called again
	for hits, kills := 0, 0; hits < 10 || !exhausted; {
		if kills == 30 {
			t.Fatalf("%d of %d kills hit a LoadTable attempt in flight that was then retried (one lost all %d attempts: %v)", hits, kills, workflows.MaxAttempts, exhausted)
		}
		chunks = chunkCommitted(t, e, tdb, chunks, hits+1, func() string { return loadsState(t, e, run) + "\nworker: " + tailOf(w.out.String(), 4000) })
		total := int64(0)
		for _, n := range chunks {
			total += n
		}
		inFlight := runningLoads(t, e, run)
		if len(inFlight) == 0 {
			continue // between two slices: wait for the next commit
		}
		kills++
		must(t, w.cmd.Process.Signal(syscall.SIGKILL))
		w.cmd.Wait()
		w = startWorker()
		again, lost := retried(t, e, run, inFlight)
		if again {
			hits++
			t.Logf("kill %d: worker killed after chunk %d, LoadTable attempts %v in flight, retried", hits, total, inFlight)
		}
		if lost != "" {
			exhausted = true
			t.Logf("LoadTable %s lost all %d attempts; the restore goes on", lost, workflows.MaxAttempts)
		}
	}
	var res workflows.RestoreResult
	if err := run.Get(e.ctx, &res); err != nil {
		t.Fatalf("restore after the kills: %v\nworker: %s", err, w.out.String())
	}
	// Its history takes loadLost's path (TestReplayStoredHistories).
	rec := releaseRecorder(t, e, "-restore-lost", target.Password)
	rec.saveRun(t, "restore-lost", run)
	rec.install(t)
	sameFingerprints(t, "restore after the kills", e.liveFingerprints(t, tdb, "app", "big", "bag"), want)
	for _, tb := range []string{"big", "bag"} {
		if n := count(t, e, tdb, "app."+tb); n != want[tb].Rows {
			t.Fatalf("app.%s: %d rows in the target, %d at the source", tb, n, want[tb].Rows)
		}
	}
	t.Logf("restored %d rows after the kills; %d written by the run", res.Rows, res.Written)
	for tb, parts := range map[string]int{"big": 2, "bag": 1} {
		var n, loaded int
		var rows int64
		must(t, tdb.QueryRowContext(e.ctx, "SELECT COUNT(*), COALESCE(SUM(state = 'loaded'), 0), COALESCE(SUM(rows_loaded), 0) FROM dbtrail."+restore.PartsTable+
			" WHERE schema_name = 'app' AND table_name = ?", tb).Scan(&n, &loaded, &rows))
		if n != parts || loaded != parts || rows != want[tb].Rows {
			t.Errorf("app.%s: %d parts, %d loaded, %d rows; want %d parts loaded with %d rows", tb, n, loaded, rows, parts, want[tb].Rows)
		}
	}

	// The CLI: the same restore again writes nothing.
	cmd := exec.Command(bin, "restore", "--temporal-addr", e.frontend, "--at", at, "--schema", "app", "--target", ref.Name)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "(0 written by this run)") || !strings.Contains(string(out), "app.big") {
		t.Fatalf("dbtrail restore again: %v\n%s", err, out)
	}
	t.Logf("dbtrail restore again:\n%s", out)
}

// chunkCommitted waits until the restore's parts checkpoints in tdb count
// more chunks than after for each table not loaded yet (app.big, app.bag:
// a chunk of each just committed, so a kill costs every call in flight a
// chunk's progress, never all of it), and returns the chunks counted by
// table; it fails the test when every part is loaded before kill, or when
// that does not happen for 5 minutes (with state: the run's and the
// worker's, to say why).
func chunkCommitted(t *testing.T, e *backupEnv, tdb *sql.DB, after map[string]int64, kill int, state func() string) map[string]int64 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		chunks, loading, parts := map[string]int64{}, map[string]bool{}, map[string]int{}
		rows, err := tdb.QueryContext(e.ctx, "SELECT table_name, chunks, state = 'loading' FROM dbtrail."+restore.PartsTable)
		if err == nil { // else no bookkeeping table yet
			for rows.Next() {
				var tb string
				var n int64
				var l bool
				must(t, rows.Scan(&tb, &n, &l))
				chunks[tb] += n
				loading[tb] = loading[tb] || l
				parts[tb]++
			}
			must(t, rows.Err())
			rows.Close()
		}
		moved, left := true, 0
		for _, tb := range []string{"big", "bag"} {
			if parts[tb] > 0 && !loading[tb] {
				continue // loaded
			}
			left++
			moved = moved && chunks[tb] > after[tb]
		}
		switch {
		case left == 0:
			t.Fatalf("every part was loaded before kill %d", kill)
		case moved:
			return chunks
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no chunk of every table still loading committed before kill %d (after %v chunks) for 5 minutes; %s", kill, after, state())
	return nil
}

// loadsState describes run's pending activities: type, id, state, attempt,
// last heartbeat and the failure of the attempt before.
func loadsState(t *testing.T, e *backupEnv, run client.WorkflowRun) string {
	t.Helper()
	desc, err := e.c.DescribeWorkflowExecution(e.ctx, run.GetID(), run.GetRunID())
	if err != nil {
		return "describe the run: " + err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "run %s, %d pending activities:", desc.GetWorkflowExecutionInfo().GetStatus(), len(desc.PendingActivities))
	for _, pa := range desc.PendingActivities {
		fmt.Fprintf(&b, "\n  %s %s %s attempt %d, last heartbeat %v, last started %v, worker %q, last failure: %v",
			pa.GetActivityType().GetName(), pa.GetActivityId(), pa.GetState(), pa.GetAttempt(), pa.GetLastHeartbeatTime().AsTime().Format(time.RFC3339),
			pa.GetLastStartedTime().AsTime().Format(time.RFC3339), pa.GetLastWorkerIdentity(), pa.GetLastFailure().GetMessage())
	}
	return b.String()
}

// tailOf is the last n bytes of s.
func tailOf(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// runningLoads are run's LoadTable attempts started and not ended: the
// attempt of each by activity id.
func runningLoads(t *testing.T, e *backupEnv, run client.WorkflowRun) map[string]int32 {
	t.Helper()
	desc, err := e.c.DescribeWorkflowExecution(e.ctx, run.GetID(), run.GetRunID())
	must(t, err)
	out := map[string]int32{}
	for _, pa := range desc.PendingActivities {
		if pa.GetActivityType().GetName() == "LoadTable" && pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
			out[pa.GetActivityId()] = pa.GetAttempt()
		}
	}
	return out
}

// retried waits until every killed attempt (activity id: attempt) is
// either retried (a later attempt pending or in the history), timed out
// on its last attempt (MaxAttempts lost: the workflow calls LoadTable
// again, which counts as a retry) or was found ended (the history's last
// attempt is the killed one: it ended just before the kill); it reports
// whether any was retried, and the id of one that lost its last attempt.
func retried(t *testing.T, e *backupEnv, run client.WorkflowRun, killed map[string]int32) (bool, string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		pending := map[string]int32{}
		desc, err := e.c.DescribeWorkflowExecution(e.ctx, run.GetID(), run.GetRunID())
		must(t, err)
		for _, pa := range desc.PendingActivities {
			pending[pa.GetActivityId()] = pa.GetAttempt()
		}
		ended, timedOut := endedAttempts(t, e, run)
		some, open, lost := false, false, ""
		for id, a := range killed {
			switch {
			case pending[id] > a || (pending[id] == 0 && ended[id] > a):
				some = true
			case pending[id] == 0 && ended[id] == a && timedOut[id] && a == workflows.MaxAttempts:
				some, lost = true, id
			case pending[id] == 0 && ended[id] == a:
			default:
				open = true
			}
		}
		if !open {
			return some, lost
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("killed LoadTable attempts %v neither retried nor ended", killed)
	return false, ""
}

// endedAttempts are the attempts the ended activities of run last
// started with, by activity id (the history records an activity's started
// event, with its attempt, when it ends), and the ids of those that ended
// timed out.
func endedAttempts(t *testing.T, e *backupEnv, run client.WorkflowRun) (map[string]int32, map[string]bool) {
	t.Helper()
	ids := map[int64]string{}
	out, timedOut := map[string]int32{}, map[string]bool{}
	iter := e.c.GetWorkflowHistory(e.ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		must(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			ids[ev.GetEventId()] = a.GetActivityId()
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			out[ids[a.GetScheduledEventId()]] = a.GetAttempt()
		}
		if a := ev.GetActivityTaskTimedOutEventAttributes(); a != nil {
			timedOut[ids[a.GetScheduledEventId()]] = true
		}
	}
	return out, timedOut
}
