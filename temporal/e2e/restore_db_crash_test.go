package e2e

import (
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workflows"
)

// TestRestoreSurvivesWorkerKills kills the worker process with SIGKILL ten
// times while it restores a keyed and a keyless table (each kill at a
// random moment after the run's progress moved, so at a random chunk, often
// inside a chunk's transaction); a new worker starts after each. The
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
	var written int64
	for kill := 1; kill <= 10; kill++ {
		p := waitRestore(t, e, run, "progress", func(p workflows.RestoreProgress) bool { return p.Written > written })
		if p.Rows == p.Total && p.TablesDone == len(p.Tables) {
			t.Fatalf("the restore ended before kill %d", kill)
		}
		written = p.Written
		time.Sleep(time.Duration(rand.IntN(1500)) * time.Millisecond)
		must(t, w.cmd.Process.Signal(syscall.SIGKILL))
		w.cmd.Wait()
		t.Logf("kill %d: worker killed at about %d of %d rows", kill, p.Rows, p.Total)
		w = startWorker()
	}
	var res workflows.RestoreResult
	if err := run.Get(e.ctx, &res); err != nil {
		t.Fatalf("restore after 10 kills: %v\nworker: %s", err, w.out.String())
	}
	tdb, err := target.DB(e.ctx, "")
	must(t, err)
	defer tdb.Close()
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
