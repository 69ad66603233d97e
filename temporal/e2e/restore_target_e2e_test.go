package e2e

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/restore"
	rtarget "github.com/dbtrail/dbtrail/internal/target"
	"github.com/dbtrail/dbtrail/internal/throttle"
	"github.com/dbtrail/dbtrail/payload"
)

// TestRestoreTargetRefusals starts Restore straight on the Temporal
// frontend, as an attacker with access to it would (the API is skipped),
// with every probe of issue 31 against the worker: each is refused
// non-retryably with its reason, a listener proves the worker never
// connected where a caller pointed it, the source server named by another
// address is refused by its identity and holds nothing of the attempt, the
// index server only where the target says so and never its database.
// A restore into a target that allows it then completes.
func TestRestoreTargetRefusals(t *testing.T) {
	e := newBackupEnv(t)
	must(t, e.source.Exec(e.ctx, "CREATE TABLE app.t (id INT PRIMARY KEY)", "INSERT INTO app.t VALUES (1), (2)"))
	e.waitCaughtUp(t)
	e.fullBackup(t)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	var dialed atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			dialed.Add(1)
			c.Close()
		}
	}()
	spec := func(ref payload.TargetRef) payload.RestoreSpec {
		return payload.RestoreSpec{Source: "main", At: "latest", Tables: []string{"app.t"}, Target: ref}
	}
	refuse := func(what string, sp payload.RestoreSpec, kind, want string) {
		t.Helper()
		run := e.startRestore(t, nil, payload.RestoreInput{RestoreSpec: sp, Parallel: 1000})
		err := run.Get(e.ctx, nil)
		t.Logf("%s:", what)
		requireAppError(t, err, kind, want)
		notRetried(t, e, run)
	}

	// What the restore passed: a DSN of any server with driver
	// options that hand it the worker's files, the environment as the
	// password, a throttle query of the caller's.
	probe := &payload.Endpoint{DSN: "x@tcp(" + ln.Addr().String() + ")/?allowAllFiles=true&allowCleartextPasswords=true", PasswordFile: "/proc/self/environ"}
	refuse("an ad-hoc DSN", spec(payload.TargetRef{AdHoc: probe}), activities.ErrTargetRefused, "ad-hoc")
	refuse("an unknown target", spec(payload.TargetRef{Name: "prod"}), activities.ErrTargetRefused, `"prod": this worker does not know it`)
	must(t, e.acts.Targets.Add(rtarget.Target{Name: "listener", Server: rtarget.Server{DSN: "x@tcp(" + ln.Addr().String() + ")/"}}))
	withQuery := spec(payload.TargetRef{Name: "listener"})
	withQuery.ThrottleQuery = "SELECT LOAD_FILE('/etc/passwd')"
	refuse("a throttle query of the caller's", withQuery, activities.ErrTargetRefused, "configuration")
	if n := dialed.Load(); n != 0 {
		t.Fatalf("the worker connected %d times to the listener a caller named", n)
	}

	// The source server by another address (localhost, not 127.0.0.1).
	must(t, e.acts.Targets.Add(srvTarget(t, "source-alias", "localhost:"+strconv.Itoa(e.source.Port), e.source.User, e.source.Password, nil)))
	into := spec(payload.TargetRef{Name: "source-alias"})
	into.IntoSchema = "probe_{schema}"
	refuse("the source by another address", into, activities.ErrTargetRefused, "is the source server main")
	var probes int
	must(t, e.src.QueryRowContext(e.ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN ('probe_app', 'dbtrail')").Scan(&probes))
	if probes != 0 {
		t.Fatalf("the refused restore created %d schemas on the source", probes)
	}

	// The index server: only where the target says so, never the index
	// database.
	idx, err := mysql.ParseDSN(e.indexDSN)
	must(t, err)
	must(t, e.acts.Targets.Add(srvTarget(t, "index", idx.Addr, idx.User, idx.Passwd, nil)))
	scratch := spec(payload.TargetRef{Name: "index"})
	scratch.IntoSchema = "restored_" + idx.DBName
	refuse("the index server", scratch, activities.ErrTargetRefused, "is dbtrail's index server")
	must(t, e.acts.Targets.Add(srvTarget(t, "index-scratch", idx.Addr, idx.User, idx.Passwd, func(tg *rtarget.Target) {
		tg.IndexServer, tg.Schemas = true, []string{"restored_*", restore.DefaultCheckpointSchema + "_" + idx.DBName, idx.DBName}
	})))
	inIndex := spec(payload.TargetRef{Name: "index-scratch"})
	inIndex.IntoSchema, inIndex.CheckpointSchema = idx.DBName, restore.DefaultCheckpointSchema+"_"+idx.DBName
	refuse("the index database", inIndex, activities.ErrTargetRefused, "is dbtrail's index database")
	inIndex.IntoSchema = "elsewhere"
	refuse("a schema the target does not allow", inIndex, activities.ErrTargetRefused, "elsewhere is not among them")
	inIndex.IntoSchema, inIndex.Replace = "restored_"+idx.DBName, true
	refuse("--replace where the target does not allow it", inIndex, activities.ErrTargetRefused, "does not allow --replace")
	inIndex.Replace, inIndex.Limits = false, throttle.Limits{MaxLoad: -1}
	refuse("a limit out of bounds", inIndex, payload.ErrBadInput, "--max-load -1")

	// Allowed: a scratch schema beside the index (as the demo's), with a
	// Parallel far above the bound (it loads with the bound).
	inIndex.Limits = throttle.Limits{}
	res, err := e.restore(t, nil, payload.RestoreInput{RestoreSpec: inIndex, Parallel: 1000})
	if err != nil || res.Rows != 2 {
		t.Fatalf("a restore the target allows: %+v %v", res, err)
	}
	if n := dialed.Load(); n != 0 {
		t.Fatalf("the worker connected %d times to the listener a caller named", n)
	}
}

// srvTarget is a restore target of the server at addr, its password in a
// 0600 file, changed by opt.
func srvTarget(t *testing.T, name, addr, user, password string, opt func(*rtarget.Target)) rtarget.Target {
	t.Helper()
	pw := filepath.Join(t.TempDir(), name+".pw")
	must(t, os.WriteFile(pw, []byte(password+"\n"), 0o600))
	tg := rtarget.Target{Name: name, Server: rtarget.Server{DSN: user + "@tcp(" + addr + ")/", PasswordFile: pw}}
	if opt != nil {
		opt(&tg)
	}
	return tg
}
