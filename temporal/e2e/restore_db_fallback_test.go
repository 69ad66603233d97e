package e2e

import (
	"database/sql"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/throttle"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/workflows"
)

// TestRestoreLoadDataRefusedMidLoad: the target's local_infile is turned
// off in the middle of a load, after LOAD DATA chunks committed and while
// the same LoadTable call goes on (its one check of local_infile said on):
// the next LOAD DATA is refused (counted in Com_load after the switch),
// its chunk rolls back, and the part goes on with INSERTs from its
// checkpoint; the restore ends verified, the target's table equal to the
// source's, no row twice.
func TestRestoreLoadDataRefusedMidLoad(t *testing.T) {
	e, want, target, tdb := bigTarget(t, 30000, 48)

	// One slice for the whole load (3,000 rows/s: about 10 s), so the
	// switch falls inside the call that found local_infile on.
	run := e.startRestore(t, target, payload.RestoreInput{Slice: 10 * time.Minute, RestoreSpec: payload.RestoreSpec{At: "latest",
		Tables: []string{"app.big"}, Target: e.target(t, target), Limits: throttle.Limits{MaxRowsPerSecond: 3000}}})
	loaded := waitLoaded(t, e, tdb, func(n int64) bool { return n > 0 })
	must(t, target.Exec(e.ctx, "SET GLOBAL local_infile = 0"))
	// Every LOAD DATA counted from here started after the switch: refused.
	loads, inserts := comCount(t, e, tdb, "Com_load"), comCount(t, e, tdb, "Com_insert")
	var at int64
	must(t, tdb.QueryRowContext(e.ctx, "SELECT SUM(rows_loaded) FROM dbtrail.dbtrail_restore_parts").Scan(&at))
	if at >= want["big"].Rows {
		t.Fatalf("the load was over (%d of %d rows) before local_infile was turned off", at, want["big"].Rows)
	}
	var res workflows.RestoreResult
	if err := run.Get(e.ctx, &res); err != nil {
		t.Fatalf("restore after local_infile was turned off at %d of %d rows: %v", at, want["big"].Rows, err)
	}
	refused, inserted := comCount(t, e, tdb, "Com_load")-loads, comCount(t, e, tdb, "Com_insert")-inserts
	if refused == 0 || inserted == 0 {
		t.Fatalf("after the switch at %d rows: %d LOAD DATA tried, %d INSERTs; want a refused LOAD DATA, then INSERTs", at, refused, inserted)
	}
	if res.Rows != want["big"].Rows || res.Written != res.Rows || len(res.Tables) != 1 || res.Tables[0].Fingerprint != want["big"].String() {
		t.Fatalf("restore: %d rows, %d written, tables %+v; want %d rows, fingerprint %s", res.Rows, res.Written, res.Tables, want["big"].Rows, want["big"])
	}
	sameFingerprints(t, "restore that fell back to INSERTs", e.liveFingerprints(t, tdb, "app", "big"), want)
	if n := count(t, e, tdb, "app.big"); n != want["big"].Rows {
		t.Fatalf("app.big: %d rows in the target, %d at the source", n, want["big"].Rows)
	}
	t.Logf("LOAD DATA for the first %d rows (%d at the switch), then %d refused LOAD DATA and %d INSERTs", loaded, at, refused, inserted)
}

// waitLoaded polls the rows the target's parts checkpoints say are loaded
// until ok says so (the bookkeeping table may not exist yet).
func waitLoaded(t *testing.T, e *backupEnv, db *sql.DB, ok func(int64) bool) int64 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		var n sql.NullInt64
		if err := db.QueryRowContext(e.ctx, "SELECT SUM(rows_loaded) FROM dbtrail.dbtrail_restore_parts").Scan(&n); err == nil && ok(n.Int64) {
			return n.Int64
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("timed out waiting for the restore's parts checkpoints")
	return 0
}
