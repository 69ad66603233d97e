package e2e

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/testsuite"
)

// TestHistoriesHoldNoSecret runs representative workflows end to end with
// every kind of secret configured (the source's, the index's and a
// restore target's passwords, an S3 access key and secret the worker
// uploads and archives with, an API token that starts jobs): a full backup
// and a verify through the API, a refresh, an archive and a restore. It
// then decodes the history of every run of the namespace (children
// included) and fails on any of those exact strings or on anything shaped
// like a secret (checkHistoryFile).
func TestHistoriesHoldNoSecret(t *testing.T) {
	ae := newArchiveEnv(t)
	e := ae.backupEnv
	w := newWorkload(31)
	w.setup(t, e, 20)
	e.waitCaughtUp(t)

	const token = "rw-history-secret-0123456789abcdef"
	toks, err := api.ParseTokens("rw "+token+" ops\n", "test")
	must(t, err)
	srv := httptest.NewUnstartedServer(nil)
	h, err := api.New(api.Config{Jobs: jobs.New(jobs.Config{Client: e.c, TaskQueue: payload.TaskQueue}), Tokens: toks, ExportDir: t.TempDir(),
		Addr: srv.Listener.Addr().String()})
	must(t, err)
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)
	c := apiClient{t: t, url: srv.URL, token: token}
	want := map[string]bool{} // workflow ids the list must show
	for _, req := range []struct{ path, body string }{{"/v1/backups", `{"label": "secrets-1"}`}, {"/v1/verifies", `{}`}} {
		var j jobs.Job
		if st := c.call("POST", req.path, req.body, &j); st != 202 {
			t.Fatalf("POST %s: %d %+v", req.path, st, j)
		}
		if j = c.waitJob(j.ID); j.State != jobs.Completed {
			t.Fatalf("%s job %+v", req.path, j)
		}
		want[j.ID] = true
	}

	w.step(t, e, 4)
	e.waitCaughtUp(t)
	rec := &historyRecorder{e: e, a: ae, dir: t.TempDir()}
	id, _, res := rec.run(t, payload.RefreshInput{TableDeltas: true})
	if res.SnapshotID == "" {
		t.Fatalf("refresh published nothing: %+v", res)
	}
	want[id] = true
	ae.runArchive(t, 24)
	want[payload.ArchiveWorkflowID("main")] = true

	target := testsuite.StartTarget(t, 36)
	rec.restore(t, "restore", target, payload.RestoreInput{RestoreSpec: payload.RestoreSpec{At: "latest",
		IntoSchema: "{schema}_copy", Schemas: []string{"app"}}})

	icfg, err := mysql.ParseDSN(e.indexDSN)
	must(t, err)
	secrets := []string{e.source.Password, e.source.DSN(""), e.indexDSN, icfg.Passwd, target.Password,
		ae.s3.AccessKey, ae.s3.SecretKey, token}
	n := checkEveryHistory(t, e, want, secrets)
	t.Logf("%d histories hold no secret", n)
}

// checkEveryHistory lists every run of e's namespace once the workflow
// ids of want are listed (visibility lags), writes each history to a file
// and checks it (checkHistoryFile) for secrets. It returns how many it
// checked.
func checkEveryHistory(t *testing.T, e *backupEnv, want map[string]bool, secrets []string) int {
	t.Helper()
	var runs [][2]string
	for try := 0; ; try++ {
		runs = runs[:0]
		seen := map[string]bool{}
		var token []byte
		for {
			resp, err := e.c.ListWorkflow(e.ctx, &workflowservice.ListWorkflowExecutionsRequest{NextPageToken: token})
			must(t, err)
			for _, x := range resp.GetExecutions() {
				runs = append(runs, [2]string{x.GetExecution().GetWorkflowId(), x.GetExecution().GetRunId()})
				seen[x.GetExecution().GetWorkflowId()] = true
			}
			if token = resp.GetNextPageToken(); len(token) == 0 {
				break
			}
		}
		missing := 0
		for id := range want {
			if !seen[id] {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if try == 100 {
			t.Fatalf("%d of the runs are not listed after %d tries", missing, try)
		}
		time.Sleep(300 * time.Millisecond)
	}
	dir := t.TempDir()
	for i, r := range runs {
		f := filepath.Join(dir, fmt.Sprintf("%d.json", i))
		writeHistory(t, fetchHistory(t, e.ctx, e.c, r[0], r[1]), f)
		checkHistoryFile(t, f, secrets...)
	}
	return len(runs)
}
