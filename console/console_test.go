package console

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/jobs"
)

// Unit tests of the console's handlers over fakes of package jobs and of
// the catalog (the API's own handler in between is the real one); the
// browser test on real servers is temporal/e2e's TestConsoleBrowser.

const (
	testAddr = "127.0.0.1:8280"
	rwSecret = "rw-console-test-secret-0123456789"
	roSecret = "ro-console-test-secret-0123456789"
	evil     = "<script>alert(1)</script>"
)

// fakeJobs answers the API's job calls with one running job whose label
// holds markup, and records starts and cancels.
type fakeJobs struct {
	mu       sync.Mutex
	started  []jobs.Request
	canceled []string
}

func (f *fakeJobs) job() jobs.Job {
	return jobs.Job{ID: "main:nightly", Kind: jobs.Backup, Workflow: "FullBackup", Source: "main", Label: "nightly" + evil, State: jobs.Running,
		URL: "http://ui.example/namespaces/default/workflows/main:nightly/run", StartedAt: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
		Progress: json.RawMessage(`{"Phase":"dump ` + strings.ReplaceAll(evil, "/", `\/`) + `","TablesTotal":3,"TablesDone":1,"Rows":10}`),
		Retrying: []jobs.Retry{{Step: "dump", Table: "app." + evil, Attempt: 2, Cause: "cause " + evil}}}
}

func (f *fakeJobs) Start(_ context.Context, req jobs.Request) (jobs.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, req)
	return jobs.Job{ID: jobs.ID(req.Source, "started"), Kind: req.Kind, Source: req.Source, State: jobs.Running}, nil
}

// List answers as the API's list does: no steps retried (Get has them).
func (f *fakeJobs) List(context.Context, jobs.Filter, int, []byte) ([]jobs.Job, []byte, error) {
	j := f.job()
	j.Retrying = nil
	return []jobs.Job{j}, nil, nil
}

func (f *fakeJobs) Get(_ context.Context, id string) (jobs.Job, error) {
	if id == "main:restored" {
		return jobs.Job{ID: id, Kind: jobs.Restore, Workflow: "Restore", Source: "main", State: jobs.Completed,
			Result: json.RawMessage(`{"TargetAddr":"127.0.0.1:3307","Rows":2,"Tables":[{"Table":"app.x\u003cscript\u003e","Target":"copy.x","Rows":2,"Written":2,"Fingerprint":"2:ab"}]}`)}, nil
	}
	if id != "main:nightly" {
		return jobs.Job{}, jobs.ErrNotFound
	}
	return f.job(), nil
}

func (f *fakeJobs) Cancel(ctx context.Context, id string) (jobs.Job, error) {
	f.mu.Lock()
	f.canceled = append(f.canceled, id)
	f.mu.Unlock()
	return f.Get(ctx, id)
}

func (f *fakeJobs) Last(context.Context, jobs.Kind, string) (jobs.Job, bool, error) {
	j := f.job()
	j.State = jobs.Completed
	return j, true, nil
}

// Schedules answers the source's schedules: a refresh whose last run is
// the fake job, a paused drill whose note holds markup.
func (f *fakeJobs) Schedules(_ context.Context, source string) ([]jobs.ScheduleState, error) {
	next := time.Now().Add(10 * time.Minute)
	last := time.Now().Add(-5 * time.Minute)
	j := f.job()
	return []jobs.ScheduleState{
		{Name: "refresh", ID: "refresh-" + source, Every: "15m0s", NextAt: &next, LastAt: &last, LastRun: j.ID, Last: &j},
		{Name: "drill", ID: "restore-drill-" + source, Every: "24h0m0s", Paused: true, Note: "paused " + evil, LastAt: &last, LastRun: "restore-drill-" + evil},
	}, nil
}

// fakeCatalog answers the catalog reads with values that hold markup.
type fakeCatalog struct{}

func (fakeCatalog) Snapshots(context.Context, string) ([]api.SnapshotEntry, error) {
	return []api.SnapshotEntry{{ID: "20261130T100000Z", Kind: "full", Position: binlogpos.Position{File: "bin.000001", Pos: 4, GTID: "0-1-2"},
		CreatedAt: time.Now().Add(-25 * time.Hour), Tables: []api.SnapshotTable{{Schema: "app", Table: "t", Origin: "dump", Kind: "full"}}},
		{ID: "20261201T100000Z", Current: true, Kind: "full", Position: binlogpos.Position{File: "bin.000001", Pos: 4, GTID: "0-1-5"},
			CreatedAt: time.Now().Add(-time.Hour), Bytes: 4096, NewBytes: 4096,
			Tables: []api.SnapshotTable{{Schema: "app", Table: evil, Origin: "dump", Kind: "full", Rows: 3, Bytes: 4096, NewBytes: 4096}}}}, nil
}

func (fakeCatalog) Manifest(_ context.Context, _, id string) ([]byte, error) {
	if id == "20261130T100000Z" { // the same table file, another chain 1
		return []byte(`{"snapshot_id":"20261130T100000Z","tables":[{"schema":"app","table":"t","file":"app/t.parquet","chain":["app/t.000001.posdel"]}],` +
			`"files":{"app/t.parquet":{"sha256":"` + strings.Repeat("ab", 32) + `","size":4096},"app/t.000001.posdel":{"sha256":"` + strings.Repeat("ef", 32) + `","size":10}}}`), nil
	}
	if id != "20261201T100000Z" {
		return nil, &api.Error{Status: http.StatusNotFound, Code: api.CodeNotFound, Field: "id", Message: "no snapshot " + id}
	}
	esc := strings.ReplaceAll(evil, "/", `\/`)
	return []byte(`{"snapshot_id":"20261201T100000Z","note":"` + esc + `","tables":[{"schema":"app","table":"` + esc + `","file":"app/t.parquet",` +
		`"chain":["app/t.000001.posdel","app/t.000001.upserts","app/` + esc + `.000002.posdel"],"origin":"compacted"}],` +
		`"files":{"app/t.parquet":{"sha256":"` + strings.Repeat("ab", 32) + `","size":4096},"app/t.000001.posdel":{"sha256":"` + strings.Repeat("cd", 32) + `","size":10}}}`), nil
}

// CheckFiles answers the table file as differing (its detail holds
// markup), the rest ok.
func (fakeCatalog) CheckFiles(_ context.Context, _, id, table string) (api.FileChecks, error) {
	return api.FileChecks{Snapshot: id, Table: table, Files: []api.FileCheck{{Path: "app/t.parquet", Status: "differs", Detail: "size 1 " + evil},
		{Path: "app/t.000001.posdel", Status: "ok"}}}, nil
}

func (fakeCatalog) Archives(context.Context, string) ([]api.ArchivedHour, error) {
	h := time.Now().UTC().Truncate(time.Hour)
	return []api.ArchivedHour{{Hour: h.Add(-3 * time.Hour), Events: 10, Location: evil}, {Hour: h.Add(-time.Hour), Events: 5, Location: "local"}}, nil
}

func (fakeCatalog) Capture(context.Context, string) (*api.CaptureStatus, error) {
	lag := 4.0
	return &api.CaptureStatus{Checkpoint: &change.Checkpoint{BinlogFile: "bin.000001", BinlogPos: 99, GTID: evil, LastCommit: time.Now()}, LagSeconds: &lag, IndexBytes: 1 << 20}, nil
}

func (fakeCatalog) IndexWindow(_ context.Context, source string) (api.IndexWindow, error) {
	h := time.Now().UTC().Truncate(time.Hour)
	from, to := h.Add(-2*time.Hour), h.Add(time.Hour)
	return api.IndexWindow{Source: source, From: &from, To: &to, Events: 7,
		Hours: []api.IndexHour{{Hour: from, Events: 3, FirstSeq: 1, LastSeq: 3}, {Hour: h, Events: 4, FirstSeq: 4, LastSeq: 7}},
		Gaps:  []api.CaptureGap{{From: "bin.000001:4", To: "bin.000002:4", Reason: "purged " + evil, DetectedAt: h.Add(-time.Hour)}},
		LastDrill: &api.Drill{StartedAt: h, FinishedAt: h.Add(time.Minute), Target: "scratch:3306", Moment: "latest", Verdict: "failed",
			Failure: "table app." + evil + " differs", Tables: 2, Rows: 9}}, nil
}

// CaptureHistory answers two samples of source main a minute apart (the
// second 3 s behind its last commit), none of any other source.
func (fakeCatalog) CaptureHistory(_ context.Context, source string) (api.CaptureHistory, error) {
	h := api.CaptureHistory{Source: source, Samples: []api.CaptureSample{}}
	if source != "main" {
		return h, nil
	}
	lag1, lag2 := 1.0, 3.0
	t0 := time.Now().UTC().Add(-2 * time.Minute)
	h.Samples = append(h.Samples, api.CaptureSample{At: t0, LagSeconds: &lag1, LastSeq: 10},
		api.CaptureSample{At: t0.Add(time.Minute), LagSeconds: &lag2, LastSeq: 70})
	return h, nil
}

func (fakeCatalog) Folders(context.Context) ([]api.FolderSpace, error) {
	return []api.FolderSpace{{Worker: "1@host", Folder: "backup", Path: "/data/" + evil, Free: 1 << 20}}, nil
}

// fakeQuery answers every question with one row whose value holds markup.
func fakeQuery(_ context.Context, q api.Question) (api.QueryAnswer, error) {
	if strings.HasPrefix(q.SQL, "DROP") {
		return api.QueryAnswer{}, &api.Error{Status: http.StatusBadRequest, Code: api.CodeQueryRefused, Message: "refused: " + q.SQL}
	}
	switch {
	case q.At == "seq:0":
		return api.QueryAnswer{}, &api.Error{Status: http.StatusBadRequest, Code: api.CodeQueryRefused, Message: "moment seq:0 refused " + evil}
	case q.At != "" && q.SQL == tablesAtSQL:
		esc := strings.ReplaceAll(evil, "/", `\/`)
		return api.QueryAnswer{Snapshot: "20261201T100000Z", Cut: api.QueryCut{Text: "cut at moment " + evil}, Columns: []string{"schema_name", "view_name"},
			Types: []string{"VARCHAR", "VARCHAR"}, Rows: []json.RawMessage{json.RawMessage(`["app","acct"]`), json.RawMessage(`["app","` + esc + `"]`)}}, nil
	}
	return api.QueryAnswer{Snapshot: "20261201T100000Z", Cut: api.QueryCut{Text: "cut at " + evil}, Columns: []string{"id", "name" + evil},
		Types: []string{"INTEGER", "VARCHAR"}, Rows: []json.RawMessage{json.RawMessage(`[1,"` + strings.ReplaceAll(evil, "/", `\/`) + `"]`), json.RawMessage(`[2,null]`)}}, nil
}

// fakeHistory answers a row's history: an insert and an update whose
// values hold markup; table app.gone is unknown.
func fakeHistory(_ context.Context, source, table, key string, _ int) (api.History, error) {
	if table == "app.gone" {
		return api.History{}, &api.Error{Status: http.StatusNotFound, Code: api.CodeNotFound, Field: "table", Message: "unknown table " + table + " " + evil}
	}
	esc := strings.ReplaceAll(evil, "/", `\/`)
	return api.History{Source: source, Table: table, Key: key, Versions: []api.RowVersion{
		{Seq: 1, Op: "insert", GTID: "0-1-1", BinlogFile: "bin.000001", EndPos: 100, Key: json.RawMessage(`1`), After: json.RawMessage(`{"id":1,"note":"a"}`)},
		{Seq: 2, Op: "update", GTID: "0-1-2", BinlogFile: "bin.000001", EndPos: 200, Key: json.RawMessage(`1`),
			Before: json.RawMessage(`{"id":1,"note":"a"}`), After: json.RawMessage(`{"id":1,"note":"` + esc + `"}`)},
	}}, nil
}

// newTest returns the console's handler (with the API's) over the fakes.
func newTest(t *testing.T, tls bool, tokens bool) (http.Handler, *fakeJobs) {
	t.Helper()
	fj := &fakeJobs{}
	cfg := api.Config{Jobs: fj, Catalog: fakeCatalog{}, Query: fakeQuery, History: fakeHistory, Addr: testAddr, TLS: tls, ExportDir: t.TempDir(),
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if tokens {
		toks, err := api.ParseTokens("rw "+rwSecret+" ops\nro "+roSecret+" viewer\n", "test")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Tokens = toks
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h, fj
}

// browser is one browser's cookie and its requests to h.
type browser struct {
	t      *testing.T
	h      http.Handler
	cookie *http.Cookie
	csrf   string
	// origin is the Origin a form post carries (default http://testAddr).
	origin string
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// do sends method path (a form body for POST) and returns the answer; a
// session cookie in it is kept, a CSRF token in its page too.
func (b *browser) do(method, path string, form url.Values) *http.Response {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, "http://"+testAddr+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		origin := b.origin
		if origin == "" {
			origin = "http://" + testAddr
		}
		req.Header.Set("Origin", origin)
	}
	if b.cookie != nil {
		req.AddCookie(b.cookie)
	}
	rec := httptest.NewRecorder()
	b.h.ServeHTTP(rec, req)
	resp := rec.Result()
	for _, ck := range resp.Cookies() {
		if strings.HasSuffix(ck.Name, "dbtrail_session") {
			if ck.MaxAge < 0 {
				b.cookie = nil
			} else {
				b.cookie = ck
			}
		}
	}
	return resp
}

// page GETs path, wants status want and returns the body.
func (b *browser) page(path string, want int) string {
	b.t.Helper()
	resp := b.do("GET", path, nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		b.t.Fatalf("GET %s: %d, want %d\n%s", path, resp.StatusCode, want, body)
	}
	if m := csrfField.FindSubmatch(body); m != nil {
		b.csrf = string(m[1])
	}
	return string(body)
}

// login logs b in with secret and wants it to succeed.
func (b *browser) login(secret string) {
	b.t.Helper()
	resp := b.do("POST", "/login", url.Values{"token": {secret}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" || b.cookie == nil {
		b.t.Fatalf("login: %d to %q, cookie %v", resp.StatusCode, resp.Header.Get("Location"), b.cookie)
	}
	b.page("/", http.StatusOK)
}

func TestLoginLogoutAndCookie(t *testing.T) {
	h, _ := newTest(t, false, true)
	b := &browser{t: t, h: h}
	if resp := b.do("GET", "/", nil); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Fatalf("GET / without a login: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, p := range []string{"/backups", "/jobs", "/jobs/main:nightly", "/moment", "/query", "/backups/20261201T100000Z", "/live", "/jobs/main:nightly/live"} {
		if resp := b.do("GET", p, nil); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("GET %s without a login: %d", p, resp.StatusCode)
		}
	}
	if body := b.page("/login", http.StatusOK); !strings.Contains(body, `name="token"`) || !strings.Contains(body, `<label for="token">`) {
		t.Fatalf("login page:\n%s", body)
	}
	resp := b.do("POST", "/login", url.Values{"token": {"not-a-token-of-this-server-0123"}})
	if resp.StatusCode != http.StatusUnauthorized || b.cookie != nil {
		t.Fatalf("a wrong token: %d, cookie %v", resp.StatusCode, b.cookie)
	}
	resp = b.do("POST", "/login", url.Values{"token": {rwSecret}})
	ck := b.cookie
	if resp.StatusCode != http.StatusSeeOther || ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Secure ||
		ck.Path != "/" || ck.Name != "dbtrail_session" || strings.Contains(ck.Value, rwSecret) {
		t.Fatalf("login: %d, cookie %+v", resp.StatusCode, ck)
	}
	body := b.page("/", http.StatusOK)
	if strings.Contains(body, rwSecret) || !strings.Contains(body, "ops") || !strings.Contains(body, "(read-write)") {
		t.Fatalf("overview after the login holds the secret or not the token's name:\n%s", body)
	}
	if resp := b.do("POST", "/logout", url.Values{"csrf": {"wrong"}}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("logout without the CSRF token: %d", resp.StatusCode)
	}
	if resp := b.do("POST", "/logout", url.Values{"csrf": {b.csrf}}); resp.StatusCode != http.StatusSeeOther || b.cookie != nil {
		t.Fatalf("logout: %d, cookie %v", resp.StatusCode, b.cookie)
	}
	old := &browser{t: t, h: h, cookie: ck}
	if resp := old.do("GET", "/", nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the old session's cookie after the logout: %d", resp.StatusCode)
	}

	th, _ := newTest(t, true, true)
	tb := &browser{t: t, h: th, origin: "https://" + testAddr}
	tb.do("POST", "/login", url.Values{"token": {roSecret}})
	if tb.cookie == nil || !tb.cookie.Secure || tb.cookie.Name != "__Host-dbtrail_session" || !tb.cookie.HttpOnly || tb.cookie.SameSite != http.SameSiteStrictMode {
		t.Fatalf("the cookie under TLS: %+v", tb.cookie)
	}
}

// TestPagesEscape renders every page and finds each value of the source
// (table names, row values, labels, paths, GTIDs, causes) escaped.
func TestPagesEscape(t *testing.T) {
	h, _ := newTest(t, false, true)
	b := &browser{t: t, h: h}
	b.login(rwSecret)
	pages := map[string][]string{
		"/": {"Capture", "LOW", "Newest snapshot", "<svg", "main:nightly", "dump &lt;script&gt;alert(1)&lt;/script&gt; · 1 of 3 tables · 10 rows",
			"dump (app.&lt;script&gt;alert(1)&lt;/script&gt;) attempt 2: cause &lt;script&gt;", `id="sched-refresh"`, "paused &lt;script&gt;", "(in ",
			`id="drill-verdict" class="verdict-failed">failed`, "table app.&lt;script&gt;", "purged &lt;script&gt;", `class="capgap"`, "7 events in 2 hours"},
		"/backups": {"20261201T100000Z", "current"},
		"/backups/20261201T100000Z?check=app." + url.QueryEscape(evil): {"<details class=\"files\" open>", "<th scope=\"col\">On disk</th>",
			`<td class="check check-differs">differs: size 1 &lt;script&gt;`, `<td class="check check-ok">ok</td>`, "Check these files on disk"},
		"/backups/20261201T100000Z": {"Tables of 20261201T100000Z", "first rows", "Files of each table", "4 files · origin compacted",
			"chain 1 <span class=\"tag\">compacted range</span>", "sha256 <code title=\"" + strings.Repeat("ab", 32) + "\">abababababab…</code>",
			"<code>app/&lt;script&gt;alert(1)&lt;/script&gt;.000002.posdel</code>", "no digest in the manifest",
			// The table file is the older snapshot's (same digest); chain 1 is new.
			`<code>app/t.parquet</code></td><td>4.0 KiB</td>
<td class="written"><a href="/backups/20261130T100000Z"`,
			`<code>app/t.000001.posdel</code></td><td>10 B</td>
<td class="written"><a href="/backups/20261201T100000Z"`},
		"/jobs":               {"main:nightly", `<option value="backup">`, `action="/jobs/main:nightly/cancel"`, "nightly&lt;script&gt;"},
		"/jobs?kind=backup":   {"main:nightly"},
		"/jobs/main:nightly":  {"Cancel this job", "ui.example", "Retrying", "Progress", `data-live="/jobs/main:nightly/live"`},
		"/jobs/main:restored": {"Restored and verified", "<td>copy.x</td>", "verified, fingerprint <code>2:ab</code>", "app.x&lt;script&gt;"},
		"/moment": {"Export this moment", "Restore this moment", "gtid:0-1-5", `id="coverage"`, `class="answerable"`, `class="indexed"`,
			`class="archived"`, `class="snap"`, "capture gap bin.000001:4 to bin.000002:4 (purged &lt;script&gt;"},
		"/query": {"<textarea"},
		"/moment?snapshot=20261201T100000Z&table=app." + url.QueryEscape(evil): {"First rows of", "NULL"},
		"/moment?table=app.acct&key=1":                                         {"Versions of app.acct key 1", "<mark>note = &#34;&lt;script&gt;", "(was &#34;a&#34;)", "id = 1</li>", "0-1-2"},
		"/moment?table=app.gone&key=1":                                         {"unknown table app.gone"},
		"/moment?at=seq:9":                                                     {"Tables at seq:9", "cut at moment &lt;script&gt;", `table=app.acct&amp;at=seq%3a9`, "app.&lt;script&gt;"},
		"/moment?at=seq:9&table=app.acct":                                      {"Tables at seq:9", "First rows of app.acct at seq:9", "NULL"},
		"/moment?at=seq:0":                                                     {"moment seq:0 refused &lt;script&gt;"},
	}
	for p, want := range pages {
		body := b.page(p, http.StatusOK)
		if strings.Contains(body, evil) || strings.Contains(body, "<script>") {
			t.Errorf("GET %s: a value is not escaped:\n%s", p, body)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: no %q in\n%s", p, w, body)
			}
		}
		if p != "/query" && p != "/backups" && !strings.Contains(body, "&lt;script&gt;") {
			t.Errorf("GET %s: the escaped value is not shown", p)
		}
	}
	resp := b.do("GET", "/jobs/main:nightly/live", nil)
	var live jobLive
	if body, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" ||
		json.Unmarshal(body, &live) != nil || live.State != jobs.Running || !strings.Contains(live.Progress, "alert(1)") ||
		!strings.Contains(live.Retrying, "cause "+evil) || strings.Contains(string(body), "<script>") {
		t.Fatalf("a job's live state: %d\n%s", resp.StatusCode, body)
	}
	resp = b.do("GET", "/live", nil)
	var ol overviewLive
	if body, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || json.Unmarshal(body, &ol) != nil || ol.Lag != "4s" || ol.Running != 1 || ol.LastCommit == "" ||
		strings.Count(ol.LagPlot, "<circle") != 2 || strings.Count(ol.RatePlot, "<circle") != 1 || !strings.Contains(ol.RatePlot, "Events per second") {
		t.Fatalf("the overview's live state: %d\n%s", resp.StatusCode, body)
	}
	resp = b.do("POST", "/query", url.Values{"csrf": {b.csrf}, "sql": {"SELECT 1"}})
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), "<script>") || !strings.Contains(string(body), "&lt;script&gt;") ||
		!strings.Contains(string(body), "cut at") {
		t.Fatalf("POST /query: %d\n%s", resp.StatusCode, body)
	}
	// A question at a moment: the API's ?at; its refusal shown above the box.
	resp = b.do("POST", "/query", url.Values{"csrf": {b.csrf}, "sql": {tablesAtSQL}, "at": {"seq:9"}})
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "cut at moment &lt;script&gt;") || !strings.Contains(string(body), `value="seq:9"`) {
		t.Fatalf("POST /query at a moment: %d\n%s", resp.StatusCode, body)
	}
	resp = b.do("POST", "/query", url.Values{"csrf": {b.csrf}, "sql": {"SELECT 1"}, "at": {"seq:0"}})
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "moment seq:0 refused &lt;script&gt;") {
		t.Fatalf("POST /query at a moment refused: %d\n%s", resp.StatusCode, body)
	}
	resp = b.do("POST", "/query", url.Values{"csrf": {b.csrf}, "sql": {"DROP TABLE " + evil}})
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || strings.Contains(string(body), "<script>") || !strings.Contains(string(body), "refused: DROP TABLE &lt;script&gt;") ||
		!strings.Contains(string(body), "query_refused") || !strings.Contains(string(body), "<textarea") {
		t.Fatalf("a refused query: %d\n%s", resp.StatusCode, body)
	}
	for _, form := range []url.Values{
		{"kind": {"export"}, "format": {"sql"}, "at": {"latest"}, "tables": {"app." + evil}, "out": {"x" + evil}},
		{"kind": {"restore"}, "at": {evil}, "tables": {"app." + evil}, "target": {"t" + evil}, "into_schema": {"{schema}_" + evil}},
	} {
		form.Set("csrf", b.csrf)
		resp := b.do("POST", "/moment/confirm", form)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || strings.Contains(string(body), "<script>") || !strings.Contains(string(body), `id="writes"`) ||
			!strings.Contains(string(body), "&lt;script&gt;") {
			t.Fatalf("confirm %s: %d\n%s", form.Get("kind"), resp.StatusCode, body)
		}
	}
	if body := b.page("/jobs/main:other", http.StatusNotFound); !strings.Contains(body, "not_found") {
		t.Fatalf("an unknown job:\n%s", body)
	}
	resp = b.do("GET", "/backups/20261201T100000Z/manifest", nil)
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" ||
		resp.Header.Get("Content-Disposition") != `attachment; filename=20261201T100000Z-manifest.json` || !strings.HasPrefix(string(body), `{"snapshot_id":"20261201T100000Z"`) {
		t.Fatalf("the manifest: %d %v\n%s", resp.StatusCode, resp.Header, body)
	}
	if body := b.page("/backups/20261201T100001Z/manifest", http.StatusNotFound); !strings.Contains(body, "no snapshot") {
		t.Fatalf("an unknown snapshot's manifest:\n%s", body)
	}
	if body := b.page("/nowhere", http.StatusNotFound); !strings.Contains(body, "no such page") {
		t.Fatalf("an unknown page:\n%s", body)
	}
	if resp := b.do("GET", "/static/console.css", nil); resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") {
		t.Fatalf("the stylesheet: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp := b.do("GET", "/", nil); !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Fatalf("no CSP: %v", resp.Header)
	} else if rp := resp.Header.Get("Referrer-Policy"); rp != "same-origin" {
		t.Fatalf("Referrer-Policy %q: no-referrer makes a browser's form posts carry Origin: null, refused", rp)
	}
	if resp := b.do("GET", "/v1/nowhere", nil); resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("an unknown API path is the API's JSON 404: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// TestReadOnlyStartsNothing: a read-only session sees no start or cancel
// button, and its posts are refused with 403 before the API is asked.
func TestReadOnlyStartsNothing(t *testing.T) {
	h, fj := newTest(t, false, true)
	b := &browser{t: t, h: h}
	b.login(roSecret)
	for _, p := range []string{"/jobs/main:nightly", "/moment", "/jobs", "/"} {
		body := b.page(p, http.StatusOK)
		if strings.Contains(body, "Cancel this job") || strings.Contains(body, "/cancel") || strings.Contains(body, "/moment/confirm") || !strings.Contains(body, "(read-only)") {
			t.Fatalf("GET %s as read-only shows a start or cancel:\n%s", p, body)
		}
	}
	posts := map[string]url.Values{
		"/jobs/main:nightly/cancel": {},
		"/moment/confirm":           {"kind": {"restore"}, "at": {"latest"}, "target": {"t1"}},
		"/moment/start":             {"kind": {"restore"}, "at": {"latest"}, "target": {"t1"}},
	}
	for p, form := range posts {
		form.Set("csrf", b.csrf)
		if resp := b.do("POST", p, form); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("POST %s as read-only: %d", p, resp.StatusCode)
		}
	}
	if len(fj.started) != 0 || len(fj.canceled) != 0 {
		t.Fatalf("read-only started %v, canceled %v", fj.started, fj.canceled)
	}
	// Read-only may still ask a question.
	if resp := b.do("POST", "/query", url.Values{"csrf": {b.csrf}, "sql": {"SELECT 1"}}); resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /query as read-only: %d", resp.StatusCode)
	}
}

// TestCSRFAndStarts: a post without the session's CSRF token, or from
// another site, is refused; with it a cancel and a confirmed restore reach
// the API.
func TestCSRFAndStarts(t *testing.T) {
	h, fj := newTest(t, false, true)
	b := &browser{t: t, h: h}
	b.login(rwSecret)
	for _, csrf := range []string{"", "forged"} {
		if resp := b.do("POST", "/jobs/main:nightly/cancel", url.Values{"csrf": {csrf}}); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("cancel with CSRF %q: %d", csrf, resp.StatusCode)
		}
	}
	other := &browser{t: t, h: h}
	other.login(rwSecret)
	if resp := b.do("POST", "/jobs/main:nightly/cancel", url.Values{"csrf": {other.csrf}}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cancel with another session's CSRF token: %d", resp.StatusCode)
	}
	req := httptest.NewRequest("POST", "http://"+testAddr+"/jobs/main:nightly/cancel", strings.NewReader(url.Values{"csrf": {b.csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://evil.example")
	req.AddCookie(b.cookie)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden || len(fj.canceled) != 0 {
		t.Fatalf("a cross-site cancel: %d, canceled %v", rec.Code, fj.canceled)
	}

	resp := b.do("POST", "/jobs/main:nightly/cancel", url.Values{"csrf": {b.csrf}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/jobs/main:nightly?canceled=1" || len(fj.canceled) != 1 {
		t.Fatalf("cancel: %d to %q, canceled %v", resp.StatusCode, resp.Header.Get("Location"), fj.canceled)
	}
	form := url.Values{"csrf": {b.csrf}, "kind": {"restore"}, "source": {"main"}, "at": {"gtid:0-1-5"}, "target": {"staging"},
		"into_schema": {"app_restored"}, "tables": {"app.t1, app.t2"}}
	resp = b.do("POST", "/moment/confirm", form)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "POST /v1/restores") || !strings.Contains(string(body), "app_restored") ||
		!strings.Contains(string(body), "staging") || len(fj.started) != 0 ||
		!strings.Contains(string(body), "<td>app.t2</td><td>restore target staging, table app_restored.t2</td>") {
		t.Fatalf("confirm: %d, started %v\n%s", resp.StatusCode, fj.started, body)
	}
	resp = b.do("POST", "/moment/start", form)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/jobs/main:started" || len(fj.started) != 1 ||
		fj.started[0].Kind != jobs.Restore || fj.started[0].Target == "" {
		t.Fatalf("start: %d to %q, started %+v", resp.StatusCode, resp.Header.Get("Location"), fj.started)
	}
	// The API's checks answer a bad start (an unparsable moment).
	form.Set("at", "not a moment")
	resp = b.do("POST", "/moment/start", form)
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "field at") || len(fj.started) != 1 {
		t.Fatalf("a bad moment: %d\n%s", resp.StatusCode, body)
	}
}

// TestNoTokens: without tokens the pages need no login, and a post still
// needs the session's CSRF token.
func TestNoTokens(t *testing.T) {
	h, fj := newTest(t, false, false)
	b := &browser{t: t, h: h}
	body := b.page("/", http.StatusOK)
	if b.cookie == nil || strings.Contains(body, "Log out") {
		t.Fatalf("no tokens: cookie %v\n%s", b.cookie, body)
	}
	b.page("/jobs/main:nightly", http.StatusOK)
	if resp := b.do("POST", "/jobs/main:nightly/cancel", url.Values{"csrf": {"x"}}); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("no tokens, a forged CSRF token: %d", resp.StatusCode)
	}
	if resp := b.do("POST", "/jobs/main:nightly/cancel", url.Values{"csrf": {b.csrf}}); resp.StatusCode != http.StatusSeeOther || len(fj.canceled) != 1 {
		t.Fatalf("no tokens, cancel: %d", resp.StatusCode)
	}
}
