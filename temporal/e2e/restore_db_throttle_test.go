package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/restore"
	rtarget "github.com/dbtrail/dbtrail/internal/target"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workflows"
)

// TestRestoreThrottle: with --chunk-time 0.1 s the median chunk
// transaction (as the activity measured it) takes 0.05–0.2 s; a real
// replica of the target whose SQL thread is stopped while the restore runs
// pauses it, the progress says why, nothing is loaded while it waits, and
// the restore goes on and finishes once the replica replicates again; a
// --throttle-query above 0 pauses it likewise.
func TestRestoreThrottle(t *testing.T) {
	e := newBackupEnv(t)
	must(t, e.source.Exec(e.ctx,
		`CREATE TABLE app.big (id INT PRIMARY KEY, pad VARCHAR(60), n BIGINT)`,
		`USE app; INSERT INTO app.big SELECT seq, CONCAT('row-', seq, REPEAT('x', seq % 40)), seq * 7 FROM seq_1_to_200000`,
	))
	e.waitCaughtUp(t)
	e.fullBackup(t)
	want := e.liveFingerprints(t, e.src, "app", "big")
	target := testsuite.StartTarget(t, 41)
	replica := testsuite.StartReplica(t, target, 42)
	tdb, err := target.DB(e.ctx, "")
	must(t, err)
	defer tdb.Close()

	// Chunk time.
	res, err := e.restore(t, target, workflows.RestoreInput{RestoreSpec: activities.RestoreSpec{At: "latest", Tables: []string{"app.big"},
		IntoSchema: "fast", Limits: restore.Limits{ChunkTime: 100 * time.Millisecond}}})
	must(t, err)
	ms := slices.Clone(res.Tables[0].ChunkMillis)
	slices.Sort(ms)
	median := ms[len(ms)/2]
	t.Logf("--chunk-time 0.1s: %d chunks, median %d ms, min %d, max %d", len(ms), median, ms[0], ms[len(ms)-1])
	if len(ms) < 10 || median < 50 || median > 200 {
		t.Fatalf("--chunk-time 0.1s: %d chunks, median %d ms; want 0.05–0.2 s", len(ms), median)
	}

	// A replica that stops replicating pauses the load.
	run := e.startRestore(t, target, workflows.RestoreInput{Slice: time.Second, RestoreSpec: activities.RestoreSpec{At: "latest",
		Tables: []string{"app.big"}, IntoSchema: "slow", Target: e.namedTarget(t, "with-replica", target, func(tg *rtarget.Target) {
			tg.Replicas = []rtarget.Server{rtarget.Server(endpoint(t, replica))}
		}),
		Limits: restore.Limits{MaxRowsPerSecond: 20000, ChunkTime: 100 * time.Millisecond}}})
	waitRestore(t, e, run, "rows loaded", func(p workflows.RestoreProgress) bool { return p.Rows > 0 })
	must(t, replica.Exec(e.ctx, "STOP SLAVE SQL_THREAD"))
	p := waitRestore(t, e, run, "a pause", func(p workflows.RestoreProgress) bool { return strings.Contains(p.Paused, "not replicating") })
	t.Logf("paused at %d of %d rows: %s", p.Rows, p.Total, p.Paused)
	time.Sleep(3 * time.Second)
	p2, _ := queryRestore(t, e, run)
	if p2.Rows != p.Rows || p2.Paused == "" {
		t.Fatalf("while the replica is stopped: %d rows (paused at %d), paused %q", p2.Rows, p.Rows, p2.Paused)
	}
	must(t, replica.Exec(e.ctx, "START SLAVE SQL_THREAD"))
	var slow workflows.RestoreResult
	must(t, run.Get(e.ctx, &slow))
	if slow.Rows != want["big"].Rows || p.Rows >= slow.Rows {
		t.Fatalf("after the pause: %d rows (paused at %d), want %d", slow.Rows, p.Rows, want["big"].Rows)
	}
	sameFingerprints(t, "throttled restore", e.liveFingerprints(t, tdb, "slow", "big"), want)

	// The throttle query.
	must(t, target.Exec(e.ctx, "CREATE DATABASE ctl", "CREATE TABLE ctl.flag (v INT)", "INSERT INTO ctl.flag VALUES (1)"))
	run = e.startRestore(t, target, workflows.RestoreInput{Slice: time.Second, RestoreSpec: activities.RestoreSpec{At: "latest",
		Tables: []string{"app.big"}, IntoSchema: "tq", Target: e.namedTarget(t, "throttled", target, func(tg *rtarget.Target) { tg.ThrottleQuery = "SELECT v FROM ctl.flag" })}})
	p = waitRestore(t, e, run, "a pause", func(p workflows.RestoreProgress) bool { return strings.Contains(p.Paused, "throttle query returned 1") })
	if p.Rows != 0 {
		t.Fatalf("loaded %d rows while the throttle query said 1", p.Rows)
	}
	must(t, target.Exec(e.ctx, "UPDATE ctl.flag SET v = 0"))
	must(t, run.Get(e.ctx, nil))
	sameFingerprints(t, "restore after the throttle query", e.liveFingerprints(t, tdb, "tq", "big"), want)
}
