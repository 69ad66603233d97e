package e2e

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/target"
	"github.com/dbtrail/dbtrail/internal/verify"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workflows"
)

// endpoint is srv as an ad-hoc restore reaches it: a DSN without the
// password and a password file.
func endpoint(t *testing.T, srv *testsuite.Server) payload.Endpoint {
	t.Helper()
	pw := filepath.Join(t.TempDir(), fmt.Sprintf("pw-%d", srv.Port))
	must(t, os.WriteFile(pw, []byte(srv.Password+"\n"), 0o600))
	return payload.Endpoint{DSN: fmt.Sprintf("%s@tcp(%s)/", srv.User, srv.Addr()), PasswordFile: pw}
}

// targetName is the name e's workers know srv by as a restore target.
func targetName(srv *testsuite.Server) string { return fmt.Sprintf("t%d", srv.Port) }

// target makes srv a restore target of e's workers (replace allowed,
// every schema), named targetName(srv), and returns the reference a
// restore names it by.
func (e *backupEnv) target(t *testing.T, srv *testsuite.Server) payload.TargetRef {
	t.Helper()
	return e.namedTarget(t, targetName(srv), srv)
}

// namedTarget makes srv the restore target name of e's workers (replace
// allowed, every schema), changed by opts; a name already known is kept
// as it is.
func (e *backupEnv) namedTarget(t *testing.T, name string, srv *testsuite.Server, opts ...func(*target.Target)) payload.TargetRef {
	t.Helper()
	if _, err := e.acts.Targets.Get(name); err == nil {
		return payload.TargetRef{Name: name}
	}
	ep := endpoint(t, srv)
	tg := target.Target{Name: name, Server: target.Server(ep), Replace: true}
	for _, o := range opts {
		o(&tg)
	}
	must(t, e.acts.Targets.Add(tg))
	return payload.TargetRef{Name: name}
}

// targetsFile writes e's restore targets to a 0600 file, for --restore-targets.
func (e *backupEnv) targetsFile(t *testing.T) string {
	t.Helper()
	b, err := e.acts.Targets.Marshal()
	must(t, err)
	path := filepath.Join(t.TempDir(), "restore-targets.json")
	must(t, os.WriteFile(path, b, 0o600))
	return path
}

// startRestore starts a Restore of in (source main) into target.
func (e *backupEnv) startRestore(t *testing.T, target *testsuite.Server, in payload.RestoreInput) client.WorkflowRun {
	t.Helper()
	in.Source = "main"
	addr := in.Target.String()
	if target != nil {
		addr = target.Addr()
	}
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.RestoreWorkflowID(in.RestoreSpec, addr),
		TaskQueue: payload.TaskQueue}, workflows.Restore, in)
	must(t, err)
	return run
}

// restore runs a Restore of in into target to its end.
func (e *backupEnv) restore(t *testing.T, target *testsuite.Server, in payload.RestoreInput) (workflows.RestoreResult, error) {
	t.Helper()
	if in.Target == (payload.TargetRef{}) {
		in.Target = e.target(t, target)
	}
	run := e.startRestore(t, target, in)
	var res workflows.RestoreResult
	err := run.Get(e.ctx, &res)
	return res, err
}

// liveFingerprints are the fingerprints of app.<table> on db (in schema
// schemaName) for each table, with the source's definitions.
func (e *backupEnv) liveFingerprints(t *testing.T, db *sql.DB, schemaName string, tables ...string) map[string]snapshot.Fingerprint {
	t.Helper()
	out := map[string]snapshot.Fingerprint{}
	for _, tb := range tables {
		def := *liveDef(t, e, tb)
		def.Schema = schemaName
		fp, _, err := verify.LiveFingerprint(e.ctx, db, &def)
		if err != nil {
			t.Fatalf("fingerprint %s.%s: %v", schemaName, tb, err)
		}
		out[tb] = fp
	}
	return out
}

// sameFingerprints requires got to equal want table by table.
func sameFingerprints(t *testing.T, what string, got, want map[string]snapshot.Fingerprint) {
	t.Helper()
	for tb, w := range want {
		if got[tb] != w {
			t.Errorf("%s: table %s has fingerprint %s, the source at the moment %s", what, tb, got[tb], w)
		}
	}
}

// queryRestore reads a running restore's progress.
func queryRestore(t *testing.T, e *backupEnv, run client.WorkflowRun) (payload.RestoreProgress, bool) {
	t.Helper()
	v, err := e.c.QueryWorkflow(e.ctx, run.GetID(), run.GetRunID(), payload.ProgressQuery)
	if err != nil {
		return payload.RestoreProgress{}, false
	}
	var p payload.RestoreProgress
	return p, v.Get(&p) == nil
}

// waitRestore polls run's progress until ok says so (or fails the test
// after a few minutes).
func waitRestore(t *testing.T, e *backupEnv, run client.WorkflowRun, what string, ok func(payload.RestoreProgress) bool) payload.RestoreProgress {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	var last payload.RestoreProgress
	for time.Now().Before(deadline) {
		p, got := queryRestore(t, e, run)
		if got && ok(p) {
			return p
		}
		if got {
			last = p
		}
		time.Sleep(100 * time.Millisecond)
	}
	d, err := e.c.DescribeWorkflowExecution(e.ctx, run.GetID(), run.GetRunID())
	must(t, err)
	t.Fatalf("restore: %s did not happen; last progress %+v; run %s", what, last, d.WorkflowExecutionInfo.GetStatus())
	return payload.RestoreProgress{}
}

// count is SELECT COUNT(*) of a table on db.
func count(t *testing.T, e *backupEnv, db *sql.DB, table string) int64 {
	t.Helper()
	var n int64
	must(t, db.QueryRowContext(e.ctx, "SELECT COUNT(*) FROM "+table).Scan(&n))
	return n
}
