package e2e

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// TestRefreshReshapeSurvivesWorkerKill kills the worker process while a
// refresh rewrites a 300k-row table through a shape change (columns added
// with a default, a widening, rows changed before and after): the kill is
// aimed by the run's state at the table's RefreshTable step and lands in
// it. A new worker finishes the run without a full backup; current only
// ever names complete snapshots, the published snapshot equals the
// source, and no staging folder is left.
func TestRefreshReshapeSurvivesWorkerKill(t *testing.T) {
	t.Parallel() // a waiting test: see TestMain
	bin := buildDbtrail(t)
	e := newBackupEnv(t, withoutWorker())
	eng := newEngine(t)
	exec := func(qs ...string) { e.execAll(t, qs...) }
	exec(`CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(60), n INT)`,
		`INSERT INTO big SELECT seq, CONCAT('row-', seq, REPEAT('x', seq % 40)), seq FROM seq_1_to_300000`)
	sourceDir := filepath.Join(e.acts.BackupDir, "main")
	wp := startWorkerProc(t, bin, e.frontend, e, e.indexDSN)
	e.waitCaughtUp(t)
	e.fullBackup(t)
	checkWatch := watchCurrent(t, sourceDir)
	exec("UPDATE big SET n = n + 1 WHERE id % 1000 = 0",
		"ALTER TABLE big ADD COLUMN note VARCHAR(20) NOT NULL DEFAULT 'x' AFTER id, ADD COLUMN d DECIMAL(8,2) DEFAULT 1.5, MODIFY n BIGINT",
		"UPDATE big SET note = 'after', n = -n WHERE id % 997 = 0",
		"DELETE FROM big WHERE id % 5003 = 0",
		"INSERT INTO big (id, pad, n) VALUES (300001, 'new', 1)")
	e.waitCaughtUp(t)
	id := payload.RefreshWorkflowID("main")
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: id, TaskQueue: payload.TaskQueue},
		workflows.Refresh, payload.RefreshInput{Source: "main", TableDeltas: true})
	must(t, err)
	// big is the source's only table: its rewrite is the run's only RefreshTable.
	k := killInStep(t, e, wp, id, run.GetRunID(), "RefreshTable", "PublishRefresh", "Prune")
	if !k.Killed || !k.Landed {
		t.Fatalf("the kill did not land in the rewrite: %+v", k)
	}
	t.Logf("worker killed in the rewrite of app.big (attempt %d)", k.Attempt)
	wp = startWorkerProc(t, bin, e.frontend, e, e.indexDSN)
	var res workflows.RefreshResult
	if err := run.Get(e.ctx, &res); err != nil {
		t.Fatalf("Refresh after the kill: %v\nworker output:\n%s", err, wp.out.String())
	}
	if res.Refused || res.FullBackup != "" || len(res.Tables) != 1 || !strings.Contains(res.Tables[0], "reshapes its rows") {
		t.Fatalf("refresh: refused %v, full backup %q, decisions %q", res.Refused, res.FullBackup, res.Tables)
	}
	afterKill(t, e, eng, sourceDir, []string{run.GetRunID()}, res, checkWatch)
}

// afterKill checks what a refresh a kill interrupted left: current names
// the snapshot it published and only ever named complete ones, the source
// was read by one FullBackup (the first), and the only staging folder left
// are the lost sessions', owned by the runs (kept while they ran, as
// workflows.md says: "What stays on a dead host"); the next refresh's
// AllocateSnapshot removes it, and publishes a snapshot equal to the
// source.
func afterKill(t *testing.T, e *backupEnv, eng *fold.Engine, sourceDir string, runIDs []string, res workflows.RefreshResult, checkWatch func() error) {
	t.Helper()
	if err := checkWatch(); err != nil {
		t.Fatal(err)
	}
	cur := e.current(t)
	if cur.Manifest.SnapshotID != res.SnapshotID {
		t.Fatalf("current is %s, the refresh published %s", cur.Manifest.SnapshotID, res.SnapshotID)
	}
	checkLive(t, e, eng, cur, "after the kill")
	if n := len(workflowRuns(t, e, payload.FullBackupWorkflowID("main"))); n != 1 {
		t.Fatalf("%d FullBackup runs, want 1 (the first)", n)
	}
	st, err := snapshot.Stagings(sourceDir)
	must(t, err)
	for _, s := range st {
		if s.Owner == nil || !slices.Contains(runIDs, s.Owner.RunID) {
			t.Fatalf("staging %s left behind by %+v, not by the killed runs %v", s.ID, s.Owner, runIDs)
		}
	}
	t.Logf("staging folders of the lost session: %d", len(st))
	again := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	if again.Refused || again.FullBackup != "" {
		t.Fatalf("the refresh after: refused %v, full backup %q: %q", again.Refused, again.FullBackup, again.Reasons)
	}
	if st, err = snapshot.Stagings(sourceDir); err != nil || len(st) > 0 {
		t.Fatalf("staging folders after the next refresh: %+v (%v)", st, err)
	}
	checkLive(t, e, eng, e.current(t), "the refresh after the kill")
}
