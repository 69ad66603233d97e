package e2e

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"

	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/workflows"
)

// withOwnIndex gives the test an index server of its own, one it may kill
// (the shared one serves other tests).
func withOwnIndex() envOption { return func(o *envOptions) { o.ownIndex = true } }

// withCaptureProcess runs capture as `dbtrail capture` (e.captureProc), the
// command that restarts it with backoff after a transient failure, instead
// of capture.Run in the test process.
func withCaptureProcess() envOption { return func(o *envOptions) { o.capProc = true } }

// faultEnv is a backupEnv for the fault tests: an index server of its own,
// capture as `dbtrail capture` (restarted with backoff), the workload's
// tables and app.traffic, and a full backup of them.
func faultEnv(t *testing.T, seed uint64) (*backupEnv, *workload) {
	t.Helper()
	e := newBackupEnv(t, withOwnIndex(), withCaptureProcess())
	w := newWorkload(seed)
	w.setup(t, e, 30)
	createLoadTable(t, e)
	e.waitCaughtUp(t)
	e.fullBackup(t)
	return e, w
}

// refreshEqualsSource runs a refresh (deltas on) after a few more changes
// and requires it to publish a snapshot equal to the live tables, with
// nothing left half done.
func refreshEqualsSource(t *testing.T, e *backupEnv, w *workload, step string) workflows.RefreshResult {
	t.Helper()
	w.step(t, e, 6)
	e.waitCaughtUp(t)
	res := e.refresh(t, payload.RefreshInput{TableDeltas: true, NoFullBackup: true})
	if res.Refused || res.SnapshotID == "" {
		t.Fatalf("%s: refresh refused or published nothing: %+v", step, res)
	}
	checkLive(t, e, newEngine(t), checkNothingHalfDone(t, e, res.SnapshotID), step)
	return res
}

// captureProc is a `dbtrail capture` process.
type captureProc struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
	err  error // set before done closes
}

// startCaptureProc starts `dbtrail capture` of the env's source into its
// index (the DSNs in the environment, never in argv) with extra flags; it
// is killed when the test ends.
func startCaptureProc(t *testing.T, bin string, e *backupEnv, args ...string) *captureProc {
	t.Helper()
	p := &captureProc{out: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"capture", "--metrics-addr="}, args...)...)
	p.cmd.Env = append(os.Environ(), "DBTRAIL_SOURCE_DSN="+e.source.DSN(""), "DBTRAIL_INDEX_DSN="+e.indexDSN)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	must(t, p.cmd.Start())
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(p.kill)
	return p
}

// kill SIGKILLs the process and waits for it to end.
func (p *captureProc) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// exited reports whether the process has ended.
func (p *captureProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitExit waits for the process to end by itself and returns its error.
func (p *captureProc) waitExit(t *testing.T) error {
	t.Helper()
	select {
	case <-p.done:
		return p.err
	case <-time.After(2 * time.Minute):
		t.Fatalf("capture did not stop; output:\n%s", p.out.String())
		return nil
	}
}

// waitOutput waits until the process has written s; it fails the test
// when the process ends first.
func (p *captureProc) waitOutput(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !p.out.contains(s) {
		if p.exited() || time.Now().After(deadline) {
			t.Fatalf("capture never wrote %q (exited: %v, %v); output:\n%s", s, p.exited(), p.err, p.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sourceLoad is a steady write load on the source's table app.traffic: each
// of several connections commits small transactions (inserts, updates and
// deletes of its own rows) until stopped. A failed transaction (the source
// down) is counted and the connection tries again: what the backup is
// compared with is the source's table, whatever committed.
type sourceLoad struct {
	stop    chan struct{}
	wg      sync.WaitGroup
	commits atomic.Int64
	errs    atomic.Int64
	lastErr atomic.Value // the last failure's text
}

// createLoadTable creates app.traffic, the table sourceLoad writes.
func createLoadTable(t *testing.T, e *backupEnv) {
	t.Helper()
	_, err := e.src.ExecContext(e.ctx, `CREATE TABLE traffic (id INT AUTO_INCREMENT PRIMARY KEY, conn INT NOT NULL, n INT NOT NULL, pad VARCHAR(64))`)
	must(t, err)
}

// startLoad starts the load on conns connections of its own; it stops
// when the test ends if not before.
func startLoad(t *testing.T, e *backupEnv, conns int) *sourceLoad {
	t.Helper()
	db, err := e.source.DB(e.ctx, "app")
	must(t, err)
	db.SetMaxOpenConns(conns)
	l := &sourceLoad{stop: make(chan struct{})}
	for c := range conns {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			var ids []int64
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				if err := loadTx(e, db, rng, c, &ids); err != nil {
					l.errs.Add(1)
					l.lastErr.Store(err.Error())
					time.Sleep(50 * time.Millisecond) // the source is down: try again a little later
					continue
				}
				l.commits.Add(1)
			}
		}()
	}
	t.Cleanup(func() { l.halt(); db.Close() })
	return l
}

// loadTx commits one transaction of connection c: a row inserted, and now
// and then one of its rows updated or deleted. ids are its rows.
func loadTx(e *backupEnv, db *sql.DB, rng *rand.Rand, c int, ids *[]int64) error {
	tx, err := db.BeginTx(e.ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(e.ctx, "INSERT INTO traffic (conn, n, pad) VALUES (?, 0, ?)", c, fmt.Sprintf("pad %d", rng.IntN(1e6)))
	if err != nil {
		return err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	if len(*ids) > 0 {
		other := (*ids)[rng.IntN(len(*ids))]
		switch rng.IntN(4) {
		case 0, 1:
			_, err = tx.ExecContext(e.ctx, "UPDATE traffic SET n = n + 1, pad = ? WHERE id = ?", fmt.Sprintf("upd %d", rng.IntN(1e6)), other)
		case 2:
			_, err = tx.ExecContext(e.ctx, "DELETE FROM traffic WHERE id = ?", other)
		}
		if err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	*ids = append(*ids, id)
	return nil
}

// halt stops the load and waits for its connections.
func (l *sourceLoad) halt() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// waitCommits waits until n more transactions have committed from now.
func (l *sourceLoad) waitCommits(t *testing.T, n int64) {
	t.Helper()
	want := l.commits.Load() + n
	deadline := time.Now().Add(2 * time.Minute)
	for l.commits.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("the load committed %d of %d transactions (last error: %v)", l.commits.Load(), want, l.lastErr.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitIndexedPast waits until capture's checkpoint is past seq; errors
// reading it (the index down, coming back) are waited out.
func (e *backupEnv) waitIndexedPast(t *testing.T, seq uint64) uint64 {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	var last error
	for time.Now().Before(deadline) {
		cp, ok, err := e.store.LoadCheckpoint(e.ctx, "main")
		if err == nil && ok && cp.LastSeq > seq {
			return cp.LastSeq
		}
		last = err
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("capture's checkpoint never passed seq %d (last error: %v); capture output:\n%s", seq, last, e.captureOutput())
	return 0
}

// lastSeq is capture's checkpoint seq (0 before the first).
func (e *backupEnv) lastSeq(t *testing.T) uint64 {
	t.Helper()
	cp, _, err := e.store.LoadCheckpoint(e.ctx, "main")
	must(t, err)
	return cp.LastSeq
}

func (e *backupEnv) captureOutput() string {
	if e.capture == nil {
		return "(capture runs in the test process)"
	}
	return e.capture.out.String()
}

// checkIndexWhole requires capture to have recorded no gap and the index
// to hold every seq from 1 to its checkpoint's exactly once.
func checkIndexWhole(t *testing.T, e *backupEnv) {
	t.Helper()
	gaps, err := e.store.Gaps(e.ctx, "main")
	must(t, err)
	if len(gaps) != 0 {
		t.Fatalf("capture recorded gaps: %+v", gaps)
	}
	evs := indexEvents(t, e.ctx, e.store, "main")
	last := e.lastSeq(t)
	if uint64(len(evs)) != last {
		t.Fatalf("the index holds %d events, its checkpoint is at seq %d", len(evs), last)
	}
	for seq := uint64(1); seq <= last; seq++ {
		if _, ok := evs[seq]; !ok {
			t.Fatalf("seq %d missing from the index (checkpoint at %d)", seq, last)
		}
	}
}

// checkNothingHalfDone requires no staging folder left in the source's
// backup folder and current to name a complete snapshot, id want when
// want is not empty.
func checkNothingHalfDone(t *testing.T, e *backupEnv, want string) *snapshot.Snapshot {
	t.Helper()
	dir := filepath.Join(e.acts.BackupDir, "main")
	if left, err := snapshot.Stagings(dir); err != nil || len(left) != 0 {
		t.Fatalf("staging folders left: %+v %v", left, err)
	}
	snap := e.current(t)
	if want != "" && snap.Manifest.SnapshotID != want {
		t.Fatalf("current is %s, want %s", snap.Manifest.SnapshotID, want)
	}
	return snap
}

// waitActivity waits until an activity of type step (any type: "") of the
// workflow's latest run is pending in a state cond accepts and returns it;
// it returns nil when the run closes first.
func (e *backupEnv) waitActivity(t *testing.T, workflowID, step string, cond func(*workflowpb.PendingActivityInfo) bool) *workflowpb.PendingActivityInfo {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		desc, err := e.c.DescribeWorkflowExecution(e.ctx, workflowID, "")
		must(t, err)
		if desc.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return nil
		}
		for _, pa := range desc.GetPendingActivities() {
			if (step == "" || pa.GetActivityType().GetName() == step) && cond(pa) {
				return pa
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s of %s never reached the state waited for", step, workflowID)
	return nil
}

// running accepts an activity a worker is running.
func running(pa *workflowpb.PendingActivityInfo) bool {
	return pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED
}

// failedOnce accepts an activity whose attempt failed at least once.
func failedOnce(pa *workflowpb.PendingActivityInfo) bool {
	return pa.GetAttempt() >= 2 && pa.GetLastFailure() != nil
}

func describeFailure(pa *workflowpb.PendingActivityInfo) string {
	return fmt.Sprintf("%s attempt %d failed: %s", pa.GetActivityType().GetName(), pa.GetAttempt()-1, pa.GetLastFailure().GetMessage())
}
