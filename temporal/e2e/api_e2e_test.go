package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/api"
	rtarget "github.com/dbtrail/dbtrail/internal/target"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/workflows"
)

// apiClient calls an API server with a token.
type apiClient struct {
	t     *testing.T
	url   string
	token string
}

// call sends method path with body and decodes the JSON answer into out
// (when not nil); it returns the status.
func (a apiClient) call(method, path, body string, out any) int {
	a.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.url+path, rd)
	must(a.t, err)
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	must(a.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(a.t, err)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			a.t.Fatalf("%s %s: %v\n%s", method, path, err, b)
		}
	}
	if bytes.Contains(b, []byte(a.token)) {
		a.t.Fatalf("%s %s: the answer holds the token", method, path)
	}
	return resp.StatusCode
}

type errAnswer struct {
	Error api.Error `json:"error"`
}

// waitJob polls GET /v1/jobs/{id} until the job is no longer running.
func (a apiClient) waitJob(id string) jobs.Job {
	a.t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var j jobs.Job
		if st := a.call("GET", "/v1/jobs/"+id, "", &j); st != 200 {
			a.t.Fatalf("GET job %s: %d", id, st)
		}
		if j.State != jobs.Running {
			return j
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("job %s still running", id)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestAPIJobs runs the HTTP API on the embedded Temporal server with a
// worker, capture and real servers: a backup started by POST answers 202
// with its id and a UI link; a second backup of the source while it runs is
// refused with the running job's id; a label used once is refused with
// that job's id; the job lists under its kind and source, completes with
// its snapshot; a verify started by POST completes with "match" for every
// table and shows in /v1/status; a restore (the "Restore" workflow type,
// not registered here) runs, a second restore into the same target is
// refused, and cancel asks it to stop.
func TestAPIJobs(t *testing.T) {
	e := newBackupEnv(t)
	w := newWorkload(7)
	w.setup(t, e, 20)
	e.waitCaughtUp(t)

	const rw = "rw-api-e2e-secret-0123456789"
	const ro = "ro-api-e2e-secret-0123456789"
	toks, err := api.ParseTokens("rw "+rw+" ops\nro "+ro+" viewer\n", "test")
	must(t, err)
	svc := jobs.New(jobs.Config{Client: e.c, TaskQueue: payload.TaskQueue, UI: "http://ui.example"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	h, err := api.New(api.Config{Jobs: svc, Tokens: toks, ExportDir: t.TempDir(), Addr: ln.Addr().String()})
	must(t, err)
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	c := apiClient{t: t, url: srv.URL, token: rw}

	var first jobs.Job
	if st := c.call("POST", "/v1/backups", `{"label": "nightly-1"}`, &first); st != 202 {
		t.Fatalf("POST backups: %d %+v", st, first)
	}
	if first.ID != "main:nightly-1" || first.State != jobs.Running || !strings.HasPrefix(first.URL, "http://ui.example/namespaces/default/workflows/main:nightly-1/") {
		t.Fatalf("started job %+v", first)
	}
	var refused errAnswer
	if st := c.call("POST", "/v1/backups", `{"label": "nightly-2"}`, &refused); st != 409 ||
		refused.Error.Code != api.CodeJobRunning || refused.Error.JobID != first.ID {
		t.Fatalf("second backup while one runs: %d %+v", st, refused)
	}
	if st := (apiClient{t: t, url: srv.URL, token: ro}).call("POST", "/v1/backups", `{"label": "x"}`, &refused); st != 403 {
		t.Fatalf("read-only token started a backup: %d", st)
	}

	done := c.waitJob(first.ID)
	var res workflows.FullBackupResult
	if done.State != jobs.Completed || json.Unmarshal(done.Result, &res) != nil || res.SnapshotID == "" || done.Label != "nightly-1" {
		t.Fatalf("finished backup %+v (%s)", done, done.Result)
	}
	if st := c.call("POST", "/v1/backups", `{"label": "nightly-1"}`, &refused); st != 409 ||
		refused.Error.Code != api.CodeLabelTaken || refused.Error.JobID != first.ID || refused.Error.Field != "label" {
		t.Fatalf("a used label: %d %+v", st, refused)
	}
	listed := false
	for range 60 {
		var list api.JobList
		if st := c.call("GET", "/v1/jobs?kind=backup&source=main&state=completed", "", &list); st != 200 {
			t.Fatalf("GET jobs: %d", st)
		}
		if len(list.Jobs) == 1 && list.Jobs[0].ID == first.ID && list.Jobs[0].Kind == jobs.Backup && list.Jobs[0].Source == "main" {
			listed = true
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !listed {
		t.Fatal("the finished backup is not listed under kind backup, source main, state completed")
	}

	var verify jobs.Job
	if st := c.call("POST", "/v1/verifies", `{}`, &verify); st != 202 || !strings.HasPrefix(verify.Label, "verify-") {
		t.Fatalf("POST verifies: %d %+v", st, verify)
	}
	verify = c.waitJob(verify.ID)
	var verdicts struct {
		SnapshotID string `json:"snapshot_id"`
		Match      int    `json:"match"`
		Mismatch   int    `json:"mismatch"`
		Errors     int    `json:"errors"`
	}
	if verify.State != jobs.Completed || json.Unmarshal(verify.Result, &verdicts) != nil ||
		verdicts.SnapshotID != res.SnapshotID || verdicts.Match != res.Tables || verdicts.Mismatch+verdicts.Errors != 0 {
		t.Fatalf("verify %+v: %s", verify, verify.Result)
	}
	var status api.Status
	for range 60 {
		if st := c.call("GET", "/v1/status", "", &status); st != 200 {
			t.Fatalf("GET status: %d", st)
		}
		if status.LastVerify != nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if status.LastVerify == nil || status.LastVerify.ID != verify.ID || len(status.LastVerify.Result) == 0 {
		t.Fatalf("status %+v", status)
	}

	// A restore into a target whose server accepts and never answers: its
	// plan waits (up to the DSN's timeouts) while the second start and
	// the cancel are tried.
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer mute.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	must(t, e.acts.Targets.Add(rtarget.Target{Name: "shop_copy", Server: rtarget.Server{DSN: "x@tcp(" + mute.Addr().String() + ")/?timeout=30s&readTimeout=30s"}}))
	var restore jobs.Job
	if st := c.call("POST", "/v1/restores", `{"label": "r1", "target": "shop_copy", "at": "latest"}`, &restore); st != 202 {
		t.Fatalf("POST restores: %d %+v", st, restore)
	}
	if st := c.call("POST", "/v1/restores", `{"source": "main", "label": "r2", "target": "shop_copy", "at": "latest"}`, &refused); st != 409 ||
		refused.Error.JobID != restore.ID {
		t.Fatalf("second restore into the same target: %d %+v", st, refused)
	}
	var canceled jobs.Job
	if st := c.call("POST", "/v1/jobs/"+restore.ID+"/cancel", "", &canceled); st != 202 || canceled.ID != restore.ID {
		t.Fatalf("cancel: %d %+v", st, canceled)
	}
	if st := c.call("POST", "/v1/jobs/main:no-such/cancel", "", &refused); st != 404 {
		t.Fatalf("cancel of an unknown job: %d", st)
	}
	replay(t, e, first.ID)
}
