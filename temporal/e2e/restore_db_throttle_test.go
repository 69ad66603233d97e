package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/dbtrail/dbtrail/internal/restore"
	rtarget "github.com/dbtrail/dbtrail/internal/target"
	"github.com/dbtrail/dbtrail/internal/throttle"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workflows"
)

// TestRestoreThrottle: with --chunk-time 0.1 s every chunk is sized from
// the one before it as throttle.NextChunk says, checked on the record
// alone, not the clock: each chunk transaction's rows from the target's
// binlog, each one's time as the activity measured it (ChunkMillis); a
// real replica of the target whose SQL thread is stopped while the restore
// runs pauses it, the progress says why, nothing is loaded while it waits,
// and the restore goes on and finishes once the replica replicates again;
// a --throttle-query above 0 pauses it likewise; a restore cancelled while
// paused removes what it staged (its history, recorded when asked, holds
// restore-staging-on-failure).
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

	// Chunk time: one key range (Parallel 1), so that the binlog's chunk
	// transactions (into the table, or its load twin restore.LoadTable when
	// it replaces one) and ChunkMillis are in the same order.
	lim := throttle.Limits{ChunkTime: 100 * time.Millisecond}
	res, err := e.restore(t, target, payload.RestoreInput{Parallel: 1, RestoreSpec: payload.RestoreSpec{At: "latest", Tables: []string{"app.big"},
		IntoSchema: "fast", Limits: lim}})
	must(t, err)
	checkChunkSizing(t, binlogChunkRows(t, e, target, "fast", "big", restore.LoadTable("big")), res.Tables[0].ChunkMillis, want["big"].Rows, lim)

	// A replica that stops replicating pauses the load.
	run := e.startRestore(t, target, payload.RestoreInput{Slice: time.Second, RestoreSpec: payload.RestoreSpec{At: "latest",
		Tables: []string{"app.big"}, IntoSchema: "slow", Target: e.namedTarget(t, "with-replica", target, func(tg *rtarget.Target) {
			tg.Replicas = []rtarget.Server{rtarget.Server(endpoint(t, replica))}
		}),
		Limits: throttle.Limits{MaxRowsPerSecond: 20000, ChunkTime: 100 * time.Millisecond}}})
	waitRestore(t, e, run, "rows loaded", func(p payload.RestoreProgress) bool { return p.Rows > 0 })
	must(t, replica.Exec(e.ctx, "STOP SLAVE SQL_THREAD"))
	p := waitRestore(t, e, run, "a pause", func(p payload.RestoreProgress) bool { return strings.Contains(p.Paused, "not replicating") })
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
	run = e.startRestore(t, target, payload.RestoreInput{Slice: time.Second, RestoreSpec: payload.RestoreSpec{At: "latest",
		Tables: []string{"app.big"}, IntoSchema: "tq", Target: e.namedTarget(t, "throttled", target, func(tg *rtarget.Target) { tg.ThrottleQuery = "SELECT v FROM ctl.flag" })}})
	p = waitRestore(t, e, run, "a pause", func(p payload.RestoreProgress) bool { return strings.Contains(p.Paused, "throttle query returned 1") })
	if p.Rows != 0 {
		t.Fatalf("loaded %d rows while the throttle query said 1", p.Rows)
	}
	must(t, target.Exec(e.ctx, "UPDATE ctl.flag SET v = 0"))
	must(t, run.Get(e.ctx, nil))
	sameFingerprints(t, "restore after the throttle query", e.liveFingerprints(t, tdb, "tq", "big"), want)

	// A restore cancelled while the throttle query pauses it removes the
	// table it staged in the work folder.
	must(t, target.Exec(e.ctx, "UPDATE ctl.flag SET v = 1"))
	run = e.startRestore(t, target, payload.RestoreInput{Slice: time.Second, RestoreSpec: payload.RestoreSpec{At: "latest",
		Tables: []string{"app.big"}, IntoSchema: "cx", Target: e.namedTarget(t, "throttled-cancel", target, func(tg *rtarget.Target) { tg.ThrottleQuery = "SELECT v FROM ctl.flag" })}})
	p = waitRestore(t, e, run, "a pause", func(p payload.RestoreProgress) bool { return strings.Contains(p.Paused, "throttle query returned 1") })
	staged := filepath.Join(e.acts.WorkDir, "restore", p.RestoreID)
	if _, err := os.Stat(staged); p.RestoreID == "" || err != nil {
		t.Fatalf("paused restore %q: nothing staged at %s: %v", p.RestoreID, staged, err)
	}
	must(t, e.c.CancelWorkflow(e.ctx, run.GetID(), run.GetRunID()))
	if err := run.Get(e.ctx, nil); err == nil {
		t.Fatal("the cancelled restore succeeded")
	}
	if _, err := os.Stat(staged); !os.IsNotExist(err) {
		t.Fatalf("the cancelled restore left %s: %v", staged, err)
	}
	rec := releaseRecorder(t, e, "-restore-cancelled", target.Password)
	rec.saveRunEnded(t, "restore-cancelled", run, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED)
	rec.install(t)
}

// binlogChunkRows reads target's binlog and returns, in commit order, the
// rows each transaction wrote into one of schema's tables: a restore's
// chunk transactions, as the server recorded them.
func binlogChunkRows(t *testing.T, e *backupEnv, target *testsuite.Server, schema string, tables ...string) []int {
	t.Helper()
	db, err := target.DB(e.ctx, "")
	must(t, err)
	defer db.Close()
	_, err = db.ExecContext(e.ctx, "FLUSH BINARY LOGS")
	must(t, err)
	rows, err := db.QueryContext(e.ctx, "SHOW BINARY LOGS")
	must(t, err)
	var files []string
	for rows.Next() {
		var name string
		var size any
		must(t, rows.Scan(&name, &size))
		files = append(files, name)
	}
	must(t, rows.Err())
	var out []int
	n := 0
	p := replication.NewBinlogParser()
	for _, f := range files {
		must(t, p.ParseFile(filepath.Join(target.Dir, f), 0, func(ev *replication.BinlogEvent) error {
			switch x := ev.Event.(type) {
			case *replication.RowsEvent:
				if string(x.Table.Schema) == schema && slices.Contains(tables, string(x.Table.Table)) {
					n += len(x.Rows)
				}
			case *replication.XIDEvent:
				if n > 0 {
					out = append(out, n)
				}
				n = 0
			}
			return nil
		}))
	}
	return out
}

// checkChunkSizing requires the chunks of a one-range load of total rows
// (their rows, their times in ms, in order) to follow throttle.NextChunk
// under lim: the first of throttle.FirstChunk rows, every later one the
// size NextChunk gives for the chunk before it at its recorded time (a
// time in whole ms stands for [ms, ms+1): NextChunk only shrinks as the
// time grows, so the size lies between its values at both ends), the last
// one at most that (the rows left).
func checkChunkSizing(t *testing.T, rows []int, millis []int32, total int64, lim throttle.Limits) {
	t.Helper()
	// How many chunks a load takes is the target's speed (a fast one
	// reaches the chunk time in fewer, larger chunks): at least three, so
	// that NextChunk sized two of them.
	if len(rows) != len(millis) || len(rows) < 3 {
		t.Fatalf("%d chunk transactions in the binlog, %d chunk times recorded; want the same, at least 3", len(rows), len(millis))
	}
	sum := 0
	for _, n := range rows {
		sum += n
	}
	if int64(sum) != total || rows[0] != throttle.FirstChunk {
		t.Fatalf("chunks of %v rows (%d in all, first %d); want %d in all, the first %d", rows, sum, rows[0], total, throttle.FirstChunk)
	}
	for i := 1; i < len(rows); i++ {
		took := time.Duration(millis[i-1]) * time.Millisecond
		hi, lo := throttle.NextChunk(rows[i-1], took, lim), throttle.NextChunk(rows[i-1], took+time.Millisecond-1, lim)
		if rows[i] > hi || rows[i] < lo && i < len(rows)-1 {
			t.Fatalf("chunk %d: %d rows after %d rows in %d ms; NextChunk says %d–%d (chunks %v, times %v)", i, rows[i], rows[i-1], millis[i-1], lo, hi, rows, millis)
		}
	}
	t.Logf("--chunk-time %s: %d chunks sized by NextChunk from their recorded rows and times: rows %v, ms %v", lim.ChunkTime, len(rows), rows, millis)
}
