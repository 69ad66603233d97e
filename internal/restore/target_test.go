package restore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/testsuite"
)

// stageTable stages rows id 0..n-1 (v "v<id>") of a table keyed by id.
func stageTable(t *testing.T, n int) Staged {
	t.Helper()
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	return stageIDs(t, ids, 256, true)
}

// testTarget starts a target server and opens it as root's dbtrail user.
func testTarget(t *testing.T, serverID uint32) (*testsuite.Server, *Target) {
	t.Helper()
	srv := testsuite.StartTarget(t, serverID)
	db, err := srv.DB(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return srv, &Target{DB: db, Addr: srv.Addr()}
}

// testJob is table app.t of restore r1 at cut 7, loaded into load.
func testJob(load string) Job {
	return Job{RestoreID: "r1", Table: moment.TablePlan{Schema: "app", Table: "t"}, Cut: moment.Cut{Seq: 7}, Schema: "app", Name: "t", Load: load}
}

// count is the rows of query's one integer.
func count(t *testing.T, db *sql.DB, query string) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRowContext(context.Background(), query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestLoadResumesFromCheckpoint: a load that fails in the middle (a
// trigger refuses one row) leaves committed chunks and a checkpoint that
// agree; the next run goes on from the checkpoint and loads each of the
// other rows exactly once, the table verifies against the staged
// fingerprint, and a run after that reports the table loaded without
// writing.
func TestLoadResumesFromCheckpoint(t *testing.T) {
	ctx := context.Background()
	srv, tg := testTarget(t, 81)
	const rows = 3000
	st := stageTable(t, rows)
	o, job := Options{Source: "src"}, testJob("t")
	if err := tg.Prepare(ctx, o, []Job{job}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Exec(ctx, "CREATE DATABASE app", "CREATE TABLE app.t (id BIGINT NOT NULL PRIMARY KEY, v VARCHAR(20))",
		"CREATE TRIGGER app.stop BEFORE INSERT ON app.t FOR EACH ROW IF NEW.id = 2900 THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused'; END IF"); err != nil {
		t.Fatal(err)
	}
	l := Load{Target: tg, Options: o, Job: job, ChunkRows: 100,
		Stage: func(context.Context, func(string, int64)) (Staged, *spaceneed.Step, error) { return st, nil, nil }}
	if _, err := l.Run(ctx); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("a load through the refusing trigger: %v", err)
	}
	cp, ok, err := readCheckpoint(ctx, tg.DB, o.Bookkeeping(), job)
	if err != nil || !ok {
		t.Fatalf("checkpoint after the failure: %v %v", ok, err)
	}
	loaded := count(t, tg.DB, "SELECT COUNT(*) FROM app.t")
	if cp.RowsLoaded <= 0 || cp.RowsLoaded >= rows || cp.RowsLoaded != loaded || cp.State != StateLoading {
		t.Fatalf("after the failure: checkpoint %d rows (%s), table %d rows", cp.RowsLoaded, cp.State, loaded)
	}
	if err := srv.Exec(ctx, "DROP TRIGGER app.stop"); err != nil {
		t.Fatal(err)
	}
	var res Result
	for !res.Done {
		if res, err = l.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if res.Rows != rows || res.Total != rows || res.Written != rows-loaded || res.Fingerprint != st.Foot.Fingerprint.String() {
		t.Fatalf("resumed load: %+v (had %d rows)", res, loaded)
	}
	if n := count(t, tg.DB, "SELECT COUNT(DISTINCT id) FROM app.t WHERE v = CONCAT('v', id)"); n != rows {
		t.Fatalf("the table holds %d right rows, want %d", n, rows)
	}
	v, err := tg.Verify(ctx, o, job, *res.Def)
	if err != nil || v.Rows != rows || v.Old != "" {
		t.Fatalf("verify: %+v %v", v, err)
	}
	again, err := l.Run(ctx)
	if err != nil || !again.Done || again.Written != 0 || again.Rows != rows {
		t.Fatalf("a run after the load: %+v %v", again, err)
	}
}

// TestVerifySwapsTwinIn: under --replace the loaded twin is verified and
// swapped in with one RENAME; the replaced table keeps OldTable's name
// with its rows; a second swap onto a taken old name is refused as
// KindTargetNotEmpty and renames nothing.
func TestVerifySwapsTwinIn(t *testing.T) {
	ctx := context.Background()
	srv, tg := testTarget(t, 82)
	const rows = 500
	st := stageTable(t, rows)
	o, job := Options{Source: "src", Replace: true}, testJob(LoadTable("t"))
	if err := srv.Exec(ctx, "CREATE DATABASE app", "CREATE TABLE app.t (id BIGINT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO app.t VALUES (1, 'old')"); err != nil {
		t.Fatal(err)
	}
	if err := tg.Prepare(ctx, o, []Job{job}); err != nil {
		t.Fatal(err)
	}
	l := Load{Target: tg, Options: o, Job: job, Stage: func(context.Context, func(string, int64)) (Staged, *spaceneed.Step, error) { return st, nil, nil }}
	var res Result
	var err error
	for !res.Done {
		if res, err = l.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, tg.DB, "SELECT COUNT(*) FROM app.t"); n != 1 {
		t.Fatalf("before the swap app.t has %d rows, want its old 1", n)
	}
	v, err := tg.Verify(ctx, o, job, *res.Def)
	if err != nil || v.Old != OldTable("t") || v.Rows != rows {
		t.Fatalf("verify: %+v %v", v, err)
	}
	if n := count(t, tg.DB, "SELECT COUNT(*) FROM app.t"); n != rows {
		t.Fatalf("after the swap app.t has %d rows, want %d", n, rows)
	}
	if n := count(t, tg.DB, fmt.Sprintf("SELECT COUNT(*) FROM app.%s WHERE v = 'old'", QuoteIdent(v.Old))); n != 1 {
		t.Fatalf("the replaced table has %d old rows, want 1", n)
	}
	cp, _, err := readCheckpoint(ctx, tg.DB, o.Bookkeeping(), job)
	if err != nil || cp.State != StateVerified {
		t.Fatalf("checkpoint after the swap: %+v %v", cp, err)
	}

	if err := srv.Exec(ctx, "CREATE TABLE app."+QuoteIdent(LoadTable("t"))+" LIKE app.t"); err != nil {
		t.Fatal(err)
	}
	_, err = swap(ctx, tg.DB, job)
	if KindOf(err) != KindTargetNotEmpty || !strings.Contains(err.Error(), "is taken") {
		t.Fatalf("a swap onto a taken old name: %v (kind %q)", err, KindOf(err))
	}
	if n := count(t, tg.DB, "SELECT COUNT(*) FROM app.t"); n != rows {
		t.Fatalf("the refused swap changed app.t: %d rows", n)
	}
}

// TestPrepareRefusesMissingPrivilege: a target user without a privilege
// the restore needs is refused as KindMissingPrivilege, naming the
// privilege, the schema and the GRANT, before anything is written (no
// bookkeeping schema).
func TestPrepareRefusesMissingPrivilege(t *testing.T) {
	ctx := context.Background()
	srv, root := testTarget(t, 83)
	if err := srv.Exec(ctx, "CREATE USER 'lim'@'%' IDENTIFIED BY 'pw'", "GRANT SELECT, INSERT, UPDATE, CREATE ON `dbtrail`.* TO 'lim'@'%'",
		"GRANT SELECT, INSERT, CREATE ON `app`.* TO 'lim'@'%'"); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", fmt.Sprintf("lim:pw@tcp(127.0.0.1:%d)/", srv.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tg := &Target{DB: db, Addr: srv.Addr()}
	err = tg.Prepare(ctx, Options{Source: "src"}, []Job{testJob("t")})
	want := "target user lim@% lacks the UPDATE privilege on schema app; nothing was written (grant it: GRANT UPDATE ON `app`.* TO 'lim'@'%')"
	if KindOf(err) != KindMissingPrivilege || err.Error() != want {
		t.Fatalf("a user without UPDATE on app:\n got %v (kind %q)\nwant %s", err, KindOf(err), want)
	}
	if n := count(t, root.DB, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'dbtrail'"); n != 0 {
		t.Fatal("the refused restore created the bookkeeping schema")
	}
	if err := srv.Exec(ctx, "GRANT UPDATE ON `app`.* TO 'lim'@'%'"); err != nil {
		t.Fatal(err)
	}
	err = tg.Prepare(ctx, Options{Source: "src", Replace: true}, []Job{testJob(LoadTable("t"))})
	if KindOf(err) != KindMissingPrivilege || !strings.Contains(err.Error(), "lacks the ALTER privilege on schema app") {
		t.Fatalf("--replace without ALTER: %v", err)
	}
	if err := tg.Prepare(ctx, Options{Source: "src"}, []Job{testJob("t")}); err != nil {
		t.Fatalf("with every privilege it needs: %v", err)
	}
	if n := count(t, root.DB, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'dbtrail'"); n != 2 {
		t.Fatalf("the bookkeeping schema holds %d tables, want 2", n)
	}
}
