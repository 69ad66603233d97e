package temporal

import (
	"database/sql"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workflows"
)

// TestRestoreSurvivesWorkerKills kills the worker process with SIGKILL ten
// times while it restores a keyed and a keyless table, each kill after the
// run's progress moved: the first and the sixth inside a chunk's
// transaction (its rows written, its checkpoint not moved:
// holdChunkCommit), the others right after a chunk committed, before its
// slice returned (waitChunkCommitted); no timer decides where a kill lands.
// (Holding the checkpoints can cost a lock wait timeout of the target's, so
// two kills use it.) A new worker
// starts after each. The
// restore finishes and verifies, and the target's tables equal the source
// at the moment: no row loaded twice (the keyless table's duplicates
// counted), none missing. `dbtrail restore` of the same moment then writes
// 0 rows.
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
	startWorker := func() *workerProc {
		return startWorkerCmd(t, bin, e.frontend, e, e.indexDSN, "--backup-dir", e.acts.BackupDir, "--work-dir", e.acts.WorkDir, "--restore-part-rows", "10000")
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
	target := testsuite.StartTarget(t, 51)

	run := e.startRestore(t, target, workflows.RestoreInput{Slice: time.Second, Parallel: 4, RestoreSpec: activities.RestoreSpec{
		At: at, Schemas: []string{"app"}, Target: endpoint(t, target), Limits: restore.Limits{MaxRowsPerSecond: 1500}}})
	tdb, err := target.DB(e.ctx, "")
	must(t, err)
	defer tdb.Close()
	var written int64
	began := time.Now() // for the log only
	for kill := 1; kill <= 10; kill++ {
		p := waitRestore(t, e, run, "progress", func(p workflows.RestoreProgress) bool { return p.Written > written })
		if p.Rows == p.Total && p.TablesDone == len(p.Tables) {
			t.Fatalf("the restore ended before kill %d", kill)
		}
		written = p.Written
		var where string
		var hold *sql.Tx
		if kill%5 == 1 {
			var chunk string
			hold, chunk = holdChunkCommit(t, e, tdb, run)
			where = "inside a chunk's transaction (" + chunk + ")"
		} else {
			where = "right after a chunk committed (" + waitChunkCommitted(t, e, tdb, p.RestoreID) + ")"
		}
		must(t, w.cmd.Process.Signal(syscall.SIGKILL))
		w.cmd.Wait()
		if hold != nil {
			must(t, hold.Rollback())
		}
		t.Logf("kill %d: worker killed %s, at about %d of %d rows, %s after the start (pending: %s)",
			kill, where, p.Rows, p.Total, time.Since(began).Round(time.Second), pendingActivities(t, e, run))
		w = startWorker()
	}
	var res workflows.RestoreResult
	if err := run.Get(e.ctx, &res); err != nil {
		t.Fatalf("restore after 10 kills: %v\nworker: %s", err, w.out.String())
	}
	sameFingerprints(t, "restore after 10 kills", e.liveFingerprints(t, tdb, "app", "big", "bag"), want)
	for _, tb := range []string{"big", "bag"} {
		if n := count(t, e, tdb, "app."+tb); n != want[tb].Rows {
			t.Fatalf("app.%s: %d rows in the target, %d at the source", tb, n, want[tb].Rows)
		}
	}
	t.Logf("restored %d rows after 10 kills; %d written by the run", res.Rows, res.Written)
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
	cmd := exec.Command(bin, "restore", "--temporal-addr", e.frontend, "--at", at, "--schema", "app",
		"--target-dsn", target.User+"@tcp("+target.Addr()+")/", "--target-password-file", endpoint(t, target).PasswordFile)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "(0 written by this run)") || !strings.Contains(string(out), "app.big") {
		t.Fatalf("dbtrail restore again: %v\n%s", err, out)
	}
	t.Logf("dbtrail restore again:\n%s", out)
}

// holdChunkCommit makes a chunk of the restore stop between its rows and
// its commit: a transaction of the test locks every checkpoint row on the
// target (SELECT ... FOR UPDATE), so a chunk transaction, which moves its
// table's checkpoint after writing its rows, waits for the lock with its
// rows written. A statement that waits for the lock before writing rows (a
// load call's bookkeeping) is let through: the lock is released and taken
// again. It returns once a chunk transaction that wrote rows waits,
// describing it, and the held transaction (roll it back after the kill).
func holdChunkCommit(t *testing.T, e *backupEnv, tdb *sql.DB, run client.WorkflowRun) (*sql.Tx, string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		hold, err := tdb.BeginTx(e.ctx, nil)
		must(t, err)
		if _, err := hold.ExecContext(e.ctx, "SELECT * FROM "+restore.Qualified(restore.DefaultCheckpointSchema, restore.BookkeepingTable)+" FOR UPDATE"); err != nil {
			hold.Rollback()
			t.Fatalf("lock the target's checkpoints: %v", err)
		}
		for time.Now().Before(deadline) {
			id, rows, ok := lockWaiter(t, e, tdb)
			if ok && rows > 0 {
				return hold, fmt.Sprintf("transaction %s wrote %d rows and waits to move its checkpoint", id, rows)
			}
			if ok { // waits before writing rows: let it through
				must(t, hold.Rollback())
				time.Sleep(20 * time.Millisecond)
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	p, _ := queryRestore(t, e, run)
	t.Fatalf("no chunk transaction waited for its checkpoint for 2 minutes; progress %+v", p)
	return nil, ""
}

// lockWaiter returns the target's transaction that waits for a lock and
// wrote the most rows, if any.
func lockWaiter(t *testing.T, e *backupEnv, tdb *sql.DB) (id string, rows int64, ok bool) {
	t.Helper()
	err := tdb.QueryRowContext(e.ctx, `SELECT trx_id, trx_rows_modified FROM information_schema.INNODB_TRX
		WHERE trx_state = 'LOCK WAIT' ORDER BY trx_rows_modified DESC LIMIT 1`).Scan(&id, &rows)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, false
	}
	if err != nil {
		t.Fatalf("transactions of the target: %v", err)
	}
	return id, rows, true
}

// waitChunkCommitted waits until another chunk of the restore commits on
// the target (its checkpoint rows move) and describes it. The loader then
// waits out its rate limit before the slice returns: a worker killed now
// has committed rows the run was not told about.
func waitChunkCommitted(t *testing.T, e *backupEnv, tdb *sql.DB, restoreID string) string {
	t.Helper()
	loaded := func() int64 {
		var n int64
		must(t, tdb.QueryRowContext(e.ctx, "SELECT COALESCE(SUM(rows_loaded), 0) FROM "+
			restore.Qualified(restore.DefaultCheckpointSchema, restore.BookkeepingTable)+" WHERE restore_id = ?", restoreID).Scan(&n))
		return n
	}
	before := loaded()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if n := loaded(); n > before {
			return fmt.Sprintf("the target's checkpoints moved from %d to %d rows", before, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no chunk of restore %s committed for 2 minutes (checkpoints at %d rows)", restoreID, before)
	return ""
}

// pendingActivities describes the run's pending activities: type, state
// and attempt.
func pendingActivities(t *testing.T, e *backupEnv, run client.WorkflowRun) string {
	t.Helper()
	desc, err := e.c.DescribeWorkflowExecution(e.ctx, run.GetID(), run.GetRunID())
	must(t, err)
	var out []string
	for _, pa := range desc.GetPendingActivities() {
		out = append(out, fmt.Sprintf("%s %s attempt %d", pa.GetActivityType().GetName(),
			strings.TrimPrefix(pa.GetState().String(), "PENDING_ACTIVITY_STATE_"), pa.GetAttempt()))
	}
	return strings.Join(out, ", ")
}
