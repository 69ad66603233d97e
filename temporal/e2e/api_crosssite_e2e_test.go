package e2e

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
)

// freeAddr returns a loopback address nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	must(t, ln.Close())
	return addr
}

// runUntil starts cmd (of exec.CommandContext(ctx), cancel ending ctx)
// and returns once a line of its standard output holds want, with the
// lines up to it; the rest is drained. stop (also run when the test ends)
// sends SIGTERM and waits for the process to end.
func runUntil(t *testing.T, cmd *exec.Cmd, cancel context.CancelFunc, want string) (lines []string, stop func()) {
	t.Helper()
	cmd.Stderr = os.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = time.Minute
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); cmd.Wait() }) }
	t.Cleanup(stop)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if strings.Contains(sc.Text(), want) {
			go func() { io.Copy(io.Discard, out) }()
			return lines, stop
		}
	}
	t.Fatalf("%s ended before it printed %q: %v\n%s", cmd.Args[1], want, sc.Err(), strings.Join(lines, "\n"))
	return nil, nil
}

// probe sends one raw request (no header but those given) and returns
// its status.
func probe(t *testing.T, method, url, body string, hdr map[string]string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	must(t, err)
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// workflowIDs lists every workflow of the namespace (visibility), sorted.
func workflowIDs(t *testing.T, e *backupEnv) []string {
	t.Helper()
	resp, err := e.c.ListWorkflow(e.ctx, &workflowservice.ListWorkflowExecutionsRequest{PageSize: 1000})
	must(t, err)
	var ids []string
	for _, ex := range resp.GetExecutions() {
		ids = append(ids, ex.GetExecution().GetWorkflowId())
	}
	slices.Sort(ids)
	return ids
}

// TestAPICrossSite runs `dbtrail serve --no-auth` (the binary, an open
// API on loopback) on the embedded Temporal: what a web page can send —
// a POST without Content-Type (a no-cors fetch), with text/plain (a form),
// a foreign Host (DNS rebinding), a foreign Origin, Sec-Fetch-Site:
// cross-site, a body-less cancel without Content-Type — is refused and
// starts or cancels nothing (the namespace's workflows are the same
// before and after). Workflows that are not jobs — a dbtrail workflow
// type started without the jobs' search attributes, another
// application's workflow — answer 404 to GET /v1/jobs/{id} and to cancel,
// and the cancel leaves them running with no cancel request; a job
// started the right way answers.
func TestAPICrossSite(t *testing.T) {
	bin := buildDbtrail(t)
	e := newBackupEnv(t, withoutWorker())
	must(t, jobs.EnsureSearchAttributes(e.ctx, e.c, "default"))

	// Not jobs: a FullBackup without the search attributes (as a refresh's
	// child or an old release starts one; not under fullbackup-main, which
	// holds main's backups) and another application's workflow. No worker
	// runs them: they stay running.
	var others []client.WorkflowRun
	for _, wf := range []struct{ id, typ string }{{"fullbackup-other", "FullBackup"}, {"payments-42", "PaymentWorkflow"}} {
		run, err := e.c.ExecuteWorkflow(e.ctx, client.StartWorkflowOptions{ID: wf.id, TaskQueue: payload.TaskQueue}, wf.typ)
		must(t, err)
		others = append(others, run)
	}

	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(e.ctx)
	cmd := exec.CommandContext(ctx, bin, "serve", "--backup-dir", e.acts.BackupDir, "--temporal-addr", e.frontend,
		"--api-addr", addr, "--no-auth", "--api-host", "backup.example.com")
	cmd.Env = append(os.Environ(), "DBTRAIL_INDEX_DSN="+e.indexDSN, "DBTRAIL_API_TOKENS=")
	runUntil(t, cmd, cancel, "dbtrail serve is running")
	base := "http://" + addr

	open := exec.CommandContext(e.ctx, bin, "serve", "--temporal-addr", e.frontend, "--api-addr", "0.0.0.0:0", "--no-auth")
	open.Env = append(os.Environ(), "DBTRAIL_INDEX_DSN=", "DBTRAIL_API_TOKENS=")
	if out, err := open.CombinedOutput(); err == nil || !strings.Contains(string(out), "--no-auth is for a loopback --api-addr only") {
		t.Errorf("serve --no-auth on every address: %v\n%s", err, out)
	}

	before := workflowIDs(t, e)
	const backup = `{"label": "csrf"}`
	for _, p := range []struct {
		name, method, path, body string
		hdr                      map[string]string
		status                   int
	}{
		{"no Content-Type", "POST", "/v1/backups", backup, nil, 415},
		{"text/plain", "POST", "/v1/backups", backup, map[string]string{"Content-Type": "text/plain"}, 415},
		{"a form", "POST", "/v1/backups", "label=csrf", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415},
		{"foreign Host", "POST", "/v1/backups", backup, map[string]string{"Content-Type": "application/json", "Host": "evil.test"}, 421},
		{"foreign Host, the port", "POST", "/v1/backups", backup, map[string]string{"Content-Type": "application/json", "Host": "evil.test:" + addr[strings.LastIndex(addr, ":")+1:]}, 421},
		{"foreign Origin", "POST", "/v1/backups", backup, map[string]string{"Content-Type": "application/json", "Origin": "http://evil.test"}, 403},
		{"cross-site fetch", "POST", "/v1/backups", backup, map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}, 403},
		{"cancel without Content-Type", "POST", "/v1/jobs/fullbackup-other/cancel", "", nil, 415},
		{"cancel, foreign Origin", "POST", "/v1/jobs/fullbackup-other/cancel", "", map[string]string{"Content-Type": "application/json", "Origin": "http://evil.test"}, 403},
		{"query, foreign Origin", "POST", "/v1/query", `{"sql": "SELECT 1"}`, map[string]string{"Content-Type": "application/json", "Origin": "http://evil.test"}, 403},
		{"rebinding GET", "GET", "/v1/jobs", "", map[string]string{"Host": "evil.test"}, 421},
		{"rebinding GET of a job", "GET", "/v1/jobs/fullbackup-other", "", map[string]string{"Host": "evil.test"}, 421},
		{"foreign Origin GET", "GET", "/v1/jobs", "", map[string]string{"Origin": "http://evil.test"}, 403},
	} {
		if st := probe(t, p.method, base+p.path, p.body, p.hdr); st != p.status {
			t.Errorf("%s: %s %s answered %d, want %d", p.name, p.method, p.path, st, p.status)
		}
	}
	if after := workflowIDs(t, e); !slices.Equal(after, before) {
		t.Fatalf("the refused requests changed the namespace's workflows: before %v, after %v", before, after)
	}

	c := apiClient{t: t, url: base, token: "not-checked-with-no-auth"}
	for _, run := range others {
		var refused errAnswer
		if st := c.call("GET", "/v1/jobs/"+run.GetID(), "", &refused); st != 404 || refused.Error.Code != api.CodeNotFound {
			t.Errorf("GET /v1/jobs/%s, not a job: %d %+v", run.GetID(), st, refused)
		}
		if st := c.call("POST", "/v1/jobs/"+run.GetID()+"/cancel", "", &refused); st != 404 {
			t.Errorf("cancel %s, not a job: %d %+v", run.GetID(), st, refused)
		}
		d, err := e.c.DescribeWorkflowExecution(e.ctx, run.GetID(), run.GetRunID())
		must(t, err)
		if st := d.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			t.Errorf("%s after the refused cancel: %s", run.GetID(), st)
		}
		it := e.c.GetWorkflowHistory(e.ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			must(t, err)
			if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED {
				t.Errorf("%s: a cancel was requested through the API", run.GetID())
			}
		}
	}

	// The accepted forms: the server's own address, a loopback name, the
	// configured proxy name and its origin, and no Origin at all.
	var started jobs.Job
	if st := c.call("POST", "/v1/backups", backup, &started); st != 202 || started.ID != "main:csrf" {
		t.Fatalf("a JSON POST from a client without an Origin: %d %+v", st, started)
	}
	for _, hdr := range []map[string]string{
		{"Host": "localhost" + addr[strings.LastIndex(addr, ":"):]},
		{"Host": "backup.example.com", "Origin": "https://backup.example.com"},
		{"Origin": base, "Sec-Fetch-Site": "same-origin"},
	} {
		if st := probe(t, "GET", base+"/v1/jobs/"+started.ID, "", hdr); st != 200 {
			t.Errorf("GET the job with %v: %d", hdr, st)
		}
	}
	var list api.JobList
	if st := c.call("GET", "/v1/jobs?limit=200", "", &list); st != 200 {
		t.Fatalf("GET jobs: %d", st)
	}
	for _, j := range list.Jobs {
		if j.ID != started.ID {
			t.Errorf("GET /v1/jobs lists %s, which is not a job", j.ID)
		}
	}
}

// TestDevTokenFile runs `dbtrail dev` (the binary) without tokens: on its
// first start it makes <data-dir>/api-tokens, mode 0600, with one
// read-write token, and prints where it is and a curl line that uses it;
// the API refuses a request without the token and answers one with it. A
// restart reuses the file as it is. --no-auth off loopback is refused.
func TestDevTokenFile(t *testing.T) {
	bin := buildDbtrail(t)
	e := newBackupEnv(t, withoutWorker())
	dataDir := filepath.Join(e.dir, "dev")
	file := filepath.Join(dataDir, api.DevTokenFile)
	dev := func(extra ...string) (string, []string, func()) {
		t.Helper()
		addr := freeAddr(t)
		ctx, cancel := context.WithCancel(e.ctx)
		args := append([]string{"dev", "--data-dir", dataDir, "--backup-dir", e.acts.BackupDir, "--capture=false",
			"--frontend-addr", freeAddr(t), "--ui-addr", "", "--metrics-addr", "", "--api-addr", addr, "--sql-addr", ""}, extra...)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), "DBTRAIL_INDEX_DSN="+e.indexDSN, "DBTRAIL_SOURCE_DSN="+e.source.DSN(""), "DBTRAIL_API_TOKENS=")
		lines, stop := runUntil(t, cmd, cancel, "/v1/jobs") // the curl line after "HTTP API"
		return "http://" + addr, lines, stop
	}
	// waitAPI polls until the API answers (it listens once Temporal is up).
	waitAPI := func(base, token string) int {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for {
			req, err := http.NewRequest("GET", base+"/v1/jobs", nil)
			must(t, err)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
				return resp.StatusCode
			}
			if time.Now().After(deadline) {
				t.Fatalf("the API of dbtrail dev never answered: %v", err)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}

	base, lines, stop := dev()
	st, err := os.Stat(file)
	must(t, err)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("%s: mode %v, want 0600", file, st.Mode().Perm())
	}
	first, err := os.ReadFile(file)
	must(t, err)
	f := strings.Fields(string(first))
	if len(f) != 3 || f[0] != "rw" || len(f[1]) != 64 {
		t.Fatalf("token file %q", first)
	}
	printed := strings.Join(lines, "\n")
	if !strings.Contains(printed, file+", made now") || !strings.Contains(printed, "Authorization: Bearer $(awk") || !strings.Contains(printed, "'"+file+"')") {
		t.Fatalf("dev does not say where its token is and how to use it:\n%s", printed)
	}
	if code := waitAPI(base, ""); code != 401 {
		t.Fatalf("dev's API without a token: %d, want 401", code)
	}
	if code := waitAPI(base, "not-the-token-0123456789abcdef"); code != 401 {
		t.Fatalf("dev's API with a wrong token: %d, want 401", code)
	}
	if code := waitAPI(base, f[1]); code != 200 {
		t.Fatalf("dev's API with its token: %d, want 200", code)
	}
	// A restart (a second dev on the same data folder, after the first
	// stops) reads the same file.
	stop()
	base, lines, _ = dev()
	again, err := os.ReadFile(file)
	must(t, err)
	if string(again) != string(first) || strings.Contains(strings.Join(lines, "\n"), "made now") {
		t.Fatalf("the restart rewrote the token file or says it made it:\n%s", strings.Join(lines, "\n"))
	}
	if code := waitAPI(base, f[1]); code != 200 {
		t.Fatalf("after the restart, the token: %d", code)
	}
	if code := waitAPI(base, ""); code != 401 {
		t.Fatalf("after the restart, no token: %d", code)
	}
}
