package e2e

import (
	"bufio"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	rtarget "github.com/dbtrail/dbtrail/internal/target"
	"github.com/dbtrail/dbtrail/internal/throttle"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workflows"
)

// bigTable creates app.big with rows rows on the env's source and backs it
// up.
func bigTable(t *testing.T, e *backupEnv, rows int) {
	t.Helper()
	must(t, e.source.Exec(e.ctx,
		`CREATE TABLE app.big (id INT PRIMARY KEY, pad VARCHAR(60), n BIGINT)`,
		fmt.Sprintf(`USE app; INSERT INTO app.big SELECT seq, CONCAT('row-', seq, REPEAT('x', seq %% 40)), seq * 7 FROM seq_1_to_%d`, rows),
	))
	e.waitCaughtUp(t)
	e.fullBackup(t)
}

// bigTarget is the start of a test that restores app.big: rows rows on
// a new env's source, backed up; their fingerprints; a new target (server
// id id) and a pool of connections to it, closed at the test's end.
func bigTarget(t *testing.T, rows int, id uint32, opts ...envOption) (*backupEnv, map[string]snapshot.Fingerprint, *testsuite.Server, *sql.DB) {
	t.Helper()
	e := newBackupEnv(t, opts...)
	bigTable(t, e, rows)
	want := e.liveFingerprints(t, e.src, "app", "big")
	target := testsuite.StartTarget(t, id)
	tdb, err := target.DB(e.ctx, "")
	must(t, err)
	t.Cleanup(func() { tdb.Close() })
	return e, want, target, tdb
}

// sleepers runs SELECT SLEEP(600) on n connections of db (each one of the
// server's Threads_running) until stop kills them with KILL QUERY.
func sleepers(t *testing.T, e *backupEnv, db *sql.DB, n int) (stop func()) {
	t.Helper()
	var ids []int64
	var wg sync.WaitGroup
	for range n {
		conn, err := db.Conn(e.ctx)
		must(t, err)
		var id int64
		must(t, conn.QueryRowContext(e.ctx, "SELECT CONNECTION_ID()").Scan(&id))
		ids = append(ids, id)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			var v int
			_ = conn.QueryRowContext(e.ctx, "SELECT SLEEP(600)").Scan(&v)
		}()
	}
	return func() {
		for _, id := range ids {
			_, _ = db.ExecContext(e.ctx, fmt.Sprintf("KILL QUERY %d", id))
		}
		wg.Wait()
	}
}

// TestRestoreMaxLoad: while the target's Threads_running is above
// --max-load (held up by sleeping queries on several connections) the
// restore loads nothing and its progress says why; once they end it goes
// on, finishes and verifies.
func TestRestoreMaxLoad(t *testing.T) {
	e, want, target, tdb := bigTarget(t, 30000, 45)
	stop := sleepers(t, e, tdb, 6)
	defer stop()
	var running int
	var name string
	must(t, tdb.QueryRowContext(e.ctx, "SHOW GLOBAL STATUS LIKE 'Threads_running'").Scan(&name, &running))
	if running < 6 {
		t.Fatalf("Threads_running %d with 6 sleeping queries", running)
	}

	run := e.startRestore(t, target, payload.RestoreInput{Slice: time.Second, RestoreSpec: payload.RestoreSpec{At: "latest",
		Tables: []string{"app.big"}, Target: e.target(t, target), Limits: throttle.Limits{MaxLoad: 3}}})
	p := waitRestore(t, e, run, "a pause", func(p payload.RestoreProgress) bool { return strings.Contains(p.Paused, "Threads_running") })
	t.Logf("paused: %s", p.Paused)
	time.Sleep(2 * time.Second)
	p2, _ := queryRestore(t, e, run)
	if p.Rows != 0 || p2.Rows != 0 || !strings.Contains(p2.Paused, "(max 3)") {
		t.Fatalf("while Threads_running is above --max-load: %d then %d rows loaded, paused %q", p.Rows, p2.Rows, p2.Paused)
	}
	stop()
	var res workflows.RestoreResult
	must(t, run.Get(e.ctx, &res))
	if res.Rows != want["big"].Rows || res.Written != res.Rows {
		t.Fatalf("after the load fell: %d rows, %d written; want %d", res.Rows, res.Written, want["big"].Rows)
	}
	sameFingerprints(t, "restore after a --max-load pause", e.liveFingerprints(t, tdb, "app", "big"), want)
}

// binlogTables are the tables (schema.table) the row events of target's
// binlog since file:pos touch.
func binlogTables(t *testing.T, e *backupEnv, db *sql.DB, file string, pos uint64) map[string]bool {
	t.Helper()
	rows, err := db.QueryContext(e.ctx, fmt.Sprintf("SHOW BINLOG EVENTS IN '%s' FROM %d", file, pos))
	must(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	must(t, err)
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	mapped := regexp.MustCompile(`table_id: \d+ \(([^)]+)\)`)
	out := map[string]bool{}
	for rows.Next() {
		must(t, rows.Scan(ptrs...))
		if m := mapped.FindSubmatch(vals[len(vals)-1]); m != nil {
			out[string(m[1])] = true
		}
	}
	must(t, rows.Err())
	return out
}

// TestRestoreNoBinlog: --no-binlog for a user without SUPER or BINLOG
// ADMIN is refused with the reason before anything is written; with the
// privilege the rows load with sql_log_bin=0: the target's binlog has no
// row event of the restored table (a restore without the flag, for
// contrast, has them).
func TestRestoreNoBinlog(t *testing.T) {
	e, want, target, tdb := bigTarget(t, 5000, 46)

	must(t, target.Exec(e.ctx, "CREATE USER loader@'%' IDENTIFIED BY 'loaderpw'",
		"GRANT SELECT, INSERT, UPDATE, CREATE, ALTER, DROP ON *.* TO loader@'%'"))
	loaderPW := filepath.Join(t.TempDir(), "loader.pw")
	must(t, os.WriteFile(loaderPW, []byte("loaderpw\n"), 0o600))
	must(t, e.acts.Targets.Add(rtarget.Target{Name: "loader", Server: rtarget.Server{DSN: "loader@tcp(" + target.Addr() + ")/", PasswordFile: loaderPW}}))
	spec := payload.RestoreSpec{At: "latest", Tables: []string{"app.big"}, IntoSchema: "nb", NoBinlog: true,
		Target: payload.TargetRef{Name: "loader"}}
	run := e.startRestore(t, target, payload.RestoreInput{RestoreSpec: spec})
	err := run.Get(e.ctx, nil)
	requireAppError(t, err, activities.ErrMissingPrivilege, "--no-binlog")
	notRetried(t, e, run)
	var schemas int
	must(t, tdb.QueryRowContext(e.ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN ('dbtrail', 'nb')").Scan(&schemas))
	if schemas != 0 {
		t.Fatalf("the refused --no-binlog restore created %d schemas", schemas)
	}

	var file string
	var pos uint64
	var doDB, ignoreDB any
	must(t, tdb.QueryRowContext(e.ctx, "SHOW MASTER STATUS").Scan(&file, &pos, &doDB, &ignoreDB))
	spec.Target = e.target(t, target)
	res, err := e.restore(t, target, payload.RestoreInput{RestoreSpec: spec})
	if err != nil || res.Rows != want["big"].Rows {
		t.Fatalf("restore --no-binlog: %+v, %v", res, err)
	}
	sameFingerprints(t, "restore --no-binlog", e.liveFingerprints(t, tdb, "nb", "big"), want)
	logged := binlogTables(t, e, tdb, file, pos)
	if logged["nb.big"] {
		t.Fatalf("restore --no-binlog: the target's binlog has row events of nb.big (tables %v)", logged)
	}

	spec.IntoSchema, spec.NoBinlog = "wb", false
	if _, err := e.restore(t, target, payload.RestoreInput{RestoreSpec: spec}); err != nil {
		t.Fatalf("restore with the binlog: %v", err)
	}
	if logged = binlogTables(t, e, tdb, file, pos); !logged["wb.big"] || logged["nb.big"] {
		t.Fatalf("the binlog's row events are of %v; want wb.big (logged) and not nb.big", logged)
	}
	t.Logf("binlog row events since %s:%d: %v", file, pos, logged)
}

// TestRestoreCancel cancels a `dbtrail restore` through the Temporal
// client (as the UI or `temporal workflow cancel` do) while it loads: the
// run ends cancelled, what it loaded stays in the target with its
// checkpoint, and the CLI lists it; the same command again goes on from
// the checkpoint, writes only the rest and ends verified, no row twice.
func TestRestoreCancel(t *testing.T) {
	bin := buildDbtrail(t)
	// An ad-hoc target (--target-dsn): the CLI lists the checkpoints it
	// reads from the target itself.
	e, want, target, tdb := bigTarget(t, 40000, 47, withAdHocTargets())
	args := []string{"restore", "--temporal-addr", e.frontend, "--at", "latest", "--table", "app.big", "--slice", "1s",
		"--target-dsn", target.User + "@tcp(" + target.Addr() + ")/", "--target-password-file", endpoint(t, target).PasswordFile}

	cmd := exec.Command(bin, append(args, "--max-rows-per-second", "4000")...)
	stderr, err := cmd.StderrPipe()
	must(t, err)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	must(t, cmd.Start())
	started := regexp.MustCompile(`Restore job (\S+) started \(label \S+, run (\S+)\)`)
	var id, runID string
	var errOut strings.Builder
	sc := bufio.NewScanner(stderr)
	for id == "" && sc.Scan() {
		errOut.WriteString(sc.Text() + "\n")
		if m := started.FindStringSubmatch(sc.Text()); m != nil {
			id, runID = m[1], m[2]
		}
	}
	if id == "" {
		cmd.Wait()
		t.Fatalf("dbtrail restore did not say it started:\n%s", errOut.String())
	}
	go io.Copy(io.Discard, stderr)
	run := e.c.GetWorkflow(e.ctx, id, runID)
	p := waitRestore(t, e, run, "rows loaded", func(p payload.RestoreProgress) bool { return p.Rows > 0 })
	must(t, e.c.CancelWorkflow(e.ctx, id, runID))
	err = run.Get(e.ctx, nil)
	var canceled *temporal.CanceledError
	if !errors.As(err, &canceled) {
		t.Fatalf("cancelled restore ended with %v", err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatalf("dbtrail restore of a cancelled run exited 0:\n%s", stdout.String())
	}
	loaded := count(t, e, tdb, "app.big")
	var cpRows int64
	var state string
	must(t, tdb.QueryRowContext(e.ctx, "SELECT rows_loaded, state FROM dbtrail."+restore.BookkeepingTable+
		" WHERE schema_name = 'app' AND table_name = 'big'").Scan(&cpRows, &state))
	t.Logf("cancelled at %d rows (progress said %d); the CLI printed:\n%s", loaded, p.Rows, stdout.String())
	if loaded == 0 || loaded >= want["big"].Rows || cpRows != loaded || state != restore.StateLoading {
		t.Fatalf("after the cancel: %d rows in the target, checkpoint %d rows %s; want some of %d, equal", loaded, cpRows, state, want["big"].Rows)
	}
	listed := fmt.Sprintf("%d of %d rows loaded", loaded, want["big"].Rows)
	if out := stdout.String(); !strings.Contains(out, "stopped; what it loaded stays") || !strings.Contains(out, listed) {
		t.Fatalf("dbtrail restore of a cancelled run did not list %q:\n%s", listed, out)
	}

	out, err := exec.Command(bin, args...).CombinedOutput()
	rest := fmt.Sprintf("%d rows (%d written by this run)", want["big"].Rows, want["big"].Rows-loaded)
	if err != nil || !strings.Contains(string(out), rest) || !strings.Contains(string(out), "verified") {
		t.Fatalf("dbtrail restore after the cancel: %v; want %q\n%s", err, rest, out)
	}
	sameFingerprints(t, "restore after a cancel", e.liveFingerprints(t, tdb, "app", "big"), want)
	if n := count(t, e, tdb, "app.big"); n != want["big"].Rows {
		t.Fatalf("app.big: %d rows in the target, %d at the source", n, want["big"].Rows)
	}
}
