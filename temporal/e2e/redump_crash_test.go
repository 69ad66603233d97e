package e2e

import (
	"path/filepath"
	"syscall"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/verify"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// TestPartialFullBackupSurvivesWorkerKill kills the worker process with
// SIGKILL while a partial full backup converts its big table; after a new
// worker starts, the run completes in a new session: its partial snapshot
// verifies against the live tables, current is still the full backup's,
// and only that one partial snapshot exists.
func TestPartialFullBackupSurvivesWorkerKill(t *testing.T) {
	t.Parallel() // a waiting test: see TestMain
	bin := buildDbtrail(t)
	e := newBackupEnv(t, withoutWorker())
	for _, q := range []string{
		`CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(60), n BIGINT)`,
		`INSERT INTO big SELECT seq, CONCAT('row-', seq, REPEAT('x', seq % 40)), seq * 7 FROM seq_1_to_1000000`,
		`CREATE TABLE small (k VARCHAR(10) PRIMARY KEY, v INT)`,
		`INSERT INTO small VALUES ('a', 1), ('b', 2)`,
		`CREATE TABLE other (id INT PRIMARY KEY)`,
		`INSERT INTO other VALUES (1)`,
	} {
		_, err := e.src.ExecContext(e.ctx, q)
		must(t, err)
	}
	sourceDir := filepath.Join(e.acts.BackupDir, "main")
	w1 := startWorkerProc(t, bin, e.frontend, e, e.indexDSN)
	full := e.fullBackup(t)
	_, err := e.src.ExecContext(e.ctx, "UPDATE big SET n = n + 1 WHERE id % 1000 = 0")
	must(t, err)

	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.RedumpWorkflowID("main"), TaskQueue: payload.TaskQueue},
		workflows.FullBackup, payload.FullBackupInput{Source: "main", Tables: []string{"app.big", "app.small"}})
	must(t, err)
	waitPhase(t, e, run, "converting tables", w1)
	waitConverting(t, e, run, "app.big")
	must(t, w1.cmd.Process.Signal(syscall.SIGKILL))
	w1.cmd.Wait()
	t.Logf("worker killed while converting")
	startWorkerProc(t, bin, e.frontend, e, e.indexDSN)
	var res workflows.FullBackupResult
	if err := run.Get(e.ctx, &res); err != nil {
		t.Fatalf("partial FullBackup after the kill: %v", err)
	}
	if res.Partial == nil || res.Tables != 2 {
		t.Fatalf("result %+v", res)
	}
	if cur := e.current(t); cur.Manifest.SnapshotID != full.SnapshotID {
		t.Fatalf("current is %s, want the full backup's %s", cur.Manifest.SnapshotID, full.SnapshotID)
	}
	if ids, err := snapshot.ListPartials(sourceDir); err != nil || len(ids) != 1 || ids[0] != res.SnapshotID {
		t.Fatalf("partial snapshots %v (%v), want only %s", ids, err, res.SnapshotID)
	}
	snap, err := moment.LocalCatalog{SourceDir: sourceDir}.Open(e.ctx, res.SnapshotID)
	must(t, err)
	must(t, snap.VerifyAll())
	for _, table := range []string{"big", "small"} {
		v, err := verify.Table(e.ctx, e.src, snap, "app", table, verify.Options{Explain: true})
		must(t, err)
		if v.Verdict != verify.Match {
			t.Fatalf("verify app.%s of the partial snapshot: %s (%s) %v", table, v.Verdict, v.Reason, v.Diff)
		}
	}
}
