package e2e

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/restore"
	"github.com/dbtrail/dbtrail/internal/sqlexport/exporttest"
	rtarget "github.com/dbtrail/dbtrail/internal/target"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/testsuite"
)

// restoreTables are the fixture tables of the restore tests.
var restoreTables = []string{"alltypes", "gen", "bag", "comp", "big", "child"}

// restoreFixture creates the fixture tables on the env's source: the
// every-type table, generated columns, a keyless table with duplicate
// rows, a composite key, a 20,000-row table with a secondary index and a
// table with a foreign key to it.
func restoreFixture(t *testing.T, e *backupEnv) {
	t.Helper()
	create, rows := exporttest.AllTypesTable()
	session := "SET SESSION sql_mode = ''; SET time_zone = '+00:00'; USE app; "
	must(t, e.source.Exec(e.ctx,
		session+create,
		session+"INSERT INTO alltypes VALUES "+strings.Join(rows, ","),
		`CREATE TABLE app.gen (id INT PRIMARY KEY, a INT, s INT AS (a * 2) STORED, v VARCHAR(20) AS (CONCAT('v-', a)) VIRTUAL, note VARCHAR(10))`,
		`INSERT INTO app.gen (id, a, note) VALUES (1, 10, ''), (2, NULL, 'x'), (3, 30, NULL)`,
		`CREATE TABLE app.bag (a INT, b VARCHAR(5))`,
		`INSERT INTO app.bag VALUES (1, 'ab'), (1, 'ab'), (2, NULL), (NULL, NULL), (NULL, NULL)`,
		`CREATE TABLE app.comp (k VARCHAR(10), n INT, v TEXT, PRIMARY KEY (k, n))`,
		`USE app; INSERT INTO app.comp SELECT CONCAT('k', seq % 7), seq, REPEAT('v', seq % 5) FROM seq_1_to_300`,
		`CREATE TABLE app.big (id INT PRIMARY KEY, pad VARCHAR(40), n BIGINT, KEY by_n (n))`,
		`USE app; INSERT INTO app.big SELECT seq, CONCAT('row-', seq), seq * 7 FROM seq_1_to_20000`,
		`CREATE TABLE app.child (id INT PRIMARY KEY, big_id INT, FOREIGN KEY (big_id) REFERENCES app.big (id))`,
		`USE app; INSERT INTO app.child SELECT seq, seq * 3 FROM seq_1_to_100`,
	))
}

// restoreChanges changes every fixture table (step makes each round
// different).
func restoreChanges(t *testing.T, e *backupEnv, step int) {
	t.Helper()
	must(t, e.source.Exec(e.ctx,
		fmt.Sprintf(`UPDATE app.big SET n = n + %d, pad = 'changed-%d' WHERE id %% 5 = %d`, step, step, step%5),
		fmt.Sprintf(`DELETE FROM app.big WHERE id %% 997 = %d`, step),
		fmt.Sprintf(`INSERT INTO app.big VALUES (%d, 'new', 1)`, 100000+step),
		fmt.Sprintf(`UPDATE app.gen SET a = a + %d WHERE id = 1`, step),
		fmt.Sprintf(`INSERT INTO app.gen (id, a) VALUES (%d, %d)`, 10+step, step),
		`DELETE FROM app.bag WHERE a = 1 LIMIT 1`,
		fmt.Sprintf(`INSERT INTO app.bag VALUES (%d, 'x'), (%d, 'x')`, step, step),
		fmt.Sprintf(`UPDATE app.comp SET v = 'changed' WHERE n %% 11 = %d`, step),
		fmt.Sprintf(`DELETE FROM app.comp WHERE n %% 13 = %d`, step),
		fmt.Sprintf(`UPDATE app.alltypes SET id = id + 1000 WHERE id = %d`, step),
		fmt.Sprintf(`UPDATE app.child SET big_id = %d WHERE id = %d`, 500+step, step),
	))
}

// TestRestoreEndToEnd restores the fixture tables at a moment given as a
// GTID, a time (with the target refusing LOAD DATA LOCAL INFILE: the
// INSERT fallback) and a binlog position into a separate target MariaDB
// (beside the names with --into-schema, and under the source's names): every
// table's fingerprint in the target equals the source's at the moment.
// A rerun writes 0 rows; a restore of another moment onto the loaded
// tables is refused before anything is written, and --replace swaps them
// for the other moment's, keeping the replaced tables.
func TestRestoreEndToEnd(t *testing.T) {
	e := newBackupEnv(t)
	restoreFixture(t, e)
	e.waitCaughtUp(t)
	e.fullBackup(t)
	restoreChanges(t, e, 1)
	var gtid, file string
	var pos uint64
	var doDB, ignoreDB any
	must(t, e.src.QueryRowContext(e.ctx, "SELECT @@gtid_binlog_pos").Scan(&gtid))
	must(t, e.src.QueryRowContext(e.ctx, "SHOW MASTER STATUS").Scan(&file, &pos, &doDB, &ignoreDB))
	atT := e.liveFingerprints(t, e.src, "app", restoreTables...)
	// Every change so far committed before the next second starts, the
	// next ones after it: the moment is the second before.
	at := sleepToNextSecond().Add(-time.Second).UTC().Format("2006-01-02 15:04:05")
	restoreChanges(t, e, 2)
	e.waitCaughtUp(t)

	target := testsuite.StartTarget(t, 31)
	tdb, err := target.DB(e.ctx, "")
	must(t, err)
	defer tdb.Close()
	// The restore by time loads with INSERTs: the target refuses LOAD DATA
	// LOCAL INFILE (local_infile off) while it runs; the others load with it.
	for _, c := range []struct {
		at, into, schema string
		inserts          bool
	}{
		{gtid, "{schema}_gtid", "app_gtid", false},
		{at, "bytime", "bytime", true},
		{fmt.Sprintf("%s:%d", file, pos), "", "app", false},
	} {
		if c.inserts {
			must(t, target.Exec(e.ctx, "SET GLOBAL local_infile = 0"))
		}
		loads, inserts := comCount(t, e, tdb, "Com_load"), comCount(t, e, tdb, "Com_insert")
		res, err := e.restore(t, target, payload.RestoreInput{RestoreSpec: payload.RestoreSpec{At: c.at, IntoSchema: c.into,
			Schemas: []string{"app"}}})
		if c.inserts {
			must(t, target.Exec(e.ctx, "SET GLOBAL local_infile = 1"))
		}
		if err != nil {
			t.Fatalf("restore at %s: %v", c.at, err)
		}
		loads, inserts = comCount(t, e, tdb, "Com_load")-loads, comCount(t, e, tdb, "Com_insert")-inserts
		if (loads == 0) != c.inserts || (c.inserts && inserts == 0) {
			t.Fatalf("restore at %s (local_infile on: %v): %d LOAD DATA and %d INSERT statements", c.at, !c.inserts, loads, inserts)
		}
		if len(res.Tables) != len(restoreTables) || res.Written != res.Rows || res.Rows == 0 {
			t.Fatalf("restore at %s: %+v", c.at, res)
		}
		sameFingerprints(t, "restore at "+c.at+" into "+c.schema, e.liveFingerprints(t, tdb, c.schema, restoreTables...), atT)
		t.Logf("restore at %s into %s: %d rows in %d tables, cut %s", c.at, c.schema, res.Rows, len(res.Tables), res.Cut)
	}
	var gen int64
	must(t, tdb.QueryRowContext(e.ctx, "SELECT s FROM app.gen WHERE id = 3").Scan(&gen))
	if gen != 60 {
		t.Fatalf("generated column computed by the target: %d, want 60", gen)
	}

	// A rerun of a finished restore writes nothing.
	again, err := e.restore(t, target, payload.RestoreInput{RestoreSpec: payload.RestoreSpec{At: fmt.Sprintf("%s:%d", file, pos), Schemas: []string{"app"}}})
	if err != nil || again.Written != 0 {
		t.Fatalf("rerun: written %d, %v", again.Written, err)
	}

	// Another moment onto the loaded tables: refused, nothing written.
	var before int64
	must(t, tdb.QueryRowContext(e.ctx, "SELECT COUNT(*) FROM dbtrail."+restore.BookkeepingTable).Scan(&before))
	_, err = e.restore(t, target, payload.RestoreInput{RestoreSpec: payload.RestoreSpec{At: "latest", Schemas: []string{"app"}}})
	requireAppError(t, err, activities.ErrTargetNotEmpty, "app.")
	var after int64
	must(t, tdb.QueryRowContext(e.ctx, "SELECT COUNT(*) FROM dbtrail."+restore.BookkeepingTable).Scan(&after))
	if after != before {
		t.Fatalf("the refused restore wrote %d checkpoints", after-before)
	}
	sameFingerprints(t, "after the refused restore", e.liveFingerprints(t, tdb, "app", restoreTables...), atT)

	// --replace: the latest moment swapped in, the old tables kept.
	now := e.liveFingerprints(t, e.src, "app", restoreTables...)
	res, err := e.restore(t, target, payload.RestoreInput{RestoreSpec: payload.RestoreSpec{At: "latest", Replace: true, Schemas: []string{"app"}}})
	if err != nil {
		t.Fatalf("restore --replace: %v", err)
	}
	sameFingerprints(t, "restore --replace", e.liveFingerprints(t, tdb, "app", restoreTables...), now)
	for _, tr := range res.Tables {
		if tr.Old != restore.OldTable(strings.TrimPrefix(tr.Target, "app.")) {
			t.Fatalf("replaced %s kept as %q", tr.Target, tr.Old)
		}
	}
	if n := count(t, e, tdb, "app."+restore.OldTable("big")); n != atT["big"].Rows {
		t.Fatalf("the replaced big has %d rows, want %d", n, atT["big"].Rows)
	}
}

// comCount is the target's global status counter name (Com_load,
// Com_insert: statements of that kind run).
func comCount(t *testing.T, e *backupEnv, db *sql.DB, name string) int64 {
	t.Helper()
	var n string
	var v int64
	must(t, db.QueryRowContext(e.ctx, "SHOW GLOBAL STATUS LIKE ?", name).Scan(&n, &v))
	return v
}

// TestRestoreRefusals: a target that cannot be reached, a user without the
// CREATE privilege, an existing table that holds rows and a moment that
// cannot be rebuilt are refused with their reason before anything is
// written. A drill restores into a scratch schema, verifies and leaves
// nothing behind.
func TestRestoreRefusals(t *testing.T) {
	e := newBackupEnv(t)
	must(t, e.source.Exec(e.ctx, "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (1), (2)"))
	e.waitCaughtUp(t)
	e.fullBackup(t)
	target := testsuite.StartTarget(t, 32)
	spec := payload.RestoreSpec{At: "latest", Tables: []string{"app.t"}}

	gone := testsuite.StartTarget(t, 33)
	must(t, gone.Stop())
	_, err := e.restore(t, gone, payload.RestoreInput{RestoreSpec: spec})
	requireAppError(t, err, activities.ErrTargetUnreachable, gone.Addr())

	must(t, target.Exec(e.ctx, "CREATE USER weak@'%' IDENTIFIED BY 'weakpw'", "GRANT SELECT, INSERT, UPDATE ON *.* TO weak@'%'"))
	weak := spec
	weakPW := filepath.Join(t.TempDir(), "weak.pw")
	must(t, os.WriteFile(weakPW, []byte("weakpw\n"), 0o600))
	must(t, e.acts.Targets.Add(rtarget.Target{Name: "weak", Server: rtarget.Server{DSN: "weak@tcp(" + target.Addr() + ")/", PasswordFile: weakPW}}))
	weak.Target = payload.TargetRef{Name: "weak"}
	_, err = e.restore(t, target, payload.RestoreInput{RestoreSpec: weak})
	requireAppError(t, err, activities.ErrMissingPrivilege, "CREATE privilege")

	must(t, target.Exec(e.ctx, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (7)"))
	_, err = e.restore(t, target, payload.RestoreInput{RestoreSpec: spec})
	requireAppError(t, err, activities.ErrTargetNotEmpty, "app.t exists and holds rows")

	bad := spec
	bad.At, bad.IntoSchema = "seq:999999999", "elsewhere"
	_, err = e.restore(t, target, payload.RestoreInput{RestoreSpec: bad})
	requireAppError(t, err, payload.ErrPositionNotCovered, "not captured yet")

	tdb, err := target.DB(e.ctx, "")
	must(t, err)
	defer tdb.Close()
	var schemas int
	must(t, tdb.QueryRowContext(e.ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN ('dbtrail', 'elsewhere')").Scan(&schemas))
	if n := count(t, e, tdb, "app.t"); n != 1 || schemas != 0 {
		t.Fatalf("refused restores wrote: app.t has %d rows, %d of their schemas exist", n, schemas)
	}

	// A drill restores into a new schema, verifies it and leaves nothing.
	res, err := e.restore(t, target, payload.RestoreInput{RestoreSpec: payload.RestoreSpec{At: "latest", Tables: []string{"app.t"}, Drill: true}})
	if err != nil || len(res.Tables) != 1 || res.Tables[0].Rows != 2 || res.Tables[0].Target != "dbtrail_drill_app.t" || len(res.Dropped) != 1 {
		t.Fatalf("drill: %+v, %v", res, err)
	}
	must(t, tdb.QueryRowContext(e.ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME NOT IN ('app', 'mysql', 'information_schema', 'performance_schema', 'sys', 'test')").Scan(&schemas))
	if n := count(t, e, tdb, "app.t"); n != 1 || schemas != 0 {
		t.Fatalf("after the drill: app.t has %d rows, %d other schemas exist", n, schemas)
	}
}

// requireAppError requires err to carry an application error of type kind
// whose message holds want.
func requireAppError(t *testing.T, err error, kind, want string) {
	t.Helper()
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != kind || !strings.Contains(err.Error(), want) {
		t.Fatalf("want a %s error naming %q, got %v", kind, want, err)
	}
	t.Logf("refused as expected: %v", err)
}
