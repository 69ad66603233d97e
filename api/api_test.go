package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/throttle"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
)

// fakeJobs records what the API asks of package jobs; unit tests only (the
// e2e test in temporal/e2e runs the real Service on Temporal).
type fakeJobs struct {
	mu      sync.Mutex
	started []jobs.Request
	startFn func(jobs.Request) (jobs.Job, error)
	filter  jobs.Filter
	size    int
}

func (f *fakeJobs) Start(_ context.Context, req jobs.Request) (jobs.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, req)
	if f.startFn != nil {
		return f.startFn(req)
	}
	return jobs.Job{ID: jobs.ID(req.Source, req.Label), Kind: req.Kind, Source: req.Source, Label: req.Label, State: jobs.Running}, nil
}

func (f *fakeJobs) List(_ context.Context, flt jobs.Filter, size int, _ []byte) ([]jobs.Job, []byte, error) {
	f.filter, f.size = flt, size
	return []jobs.Job{{ID: "main:a", State: jobs.Completed}}, []byte("next"), nil
}

func (f *fakeJobs) Get(_ context.Context, id string) (jobs.Job, error) {
	if id != "main:a" {
		return jobs.Job{}, jobs.ErrNotFound
	}
	return jobs.Job{ID: id, State: jobs.Completed, Result: json.RawMessage(`{"ok":true}`)}, nil
}

func (f *fakeJobs) Cancel(ctx context.Context, id string) (jobs.Job, error) { return f.Get(ctx, id) }

func (f *fakeJobs) Last(context.Context, jobs.Kind, string) (jobs.Job, bool, error) {
	return jobs.Job{}, false, nil
}

const (
	rwSecret = "rw-secret-0123456789abcdef"
	roSecret = "ro-secret-0123456789abcdef"
)

type fixture struct {
	t    *testing.T
	jobs *fakeJobs
	h    http.Handler
	log  *bytes.Buffer
}

// testAddr is the fixture's listen address: requests name it in Host.
const testAddr = "127.0.0.1:8280"

func newFixture(t *testing.T, tokens bool, opts ...func(*Config)) *fixture {
	t.Helper()
	f := &fixture{t: t, jobs: &fakeJobs{}, log: new(bytes.Buffer)}
	cfg := Config{Jobs: f.jobs, ExportDir: "/exports", Log: slog.New(slog.NewTextHandler(f.log, nil)), MaxBodyBytes: 1024, Addr: testAddr,
		Refresh: func(s string) payload.RefreshInput {
			return payload.RefreshInput{Source: s, TableDeltas: true, MaxChainAge: 90 * time.Minute}
		}}
	if tokens {
		toks, err := ParseTokens("# ops\nrw "+rwSecret+" ops\nro "+roSecret+"\n", "test tokens")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Tokens = toks
	}
	for _, o := range opts {
		o(&cfg)
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	return f
}

// do sends a request and returns the status and decoded JSON body. It
// sends Host testAddr and, on a POST, Content-Type: application/json;
// hdr (name, value pairs) sets others ("Host" the Host, an empty value
// removes the header, "RemoteAddr" the client's address).
func (f *fixture) do(method, path, token, body string, hdr ...string) (int, map[string]any, http.Header) {
	f.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Host = testAddr
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if method == "POST" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		switch {
		case hdr[i] == "Host":
			req.Host = hdr[i+1]
		case hdr[i] == "RemoteAddr":
			req.RemoteAddr = hdr[i+1]
		case hdr[i+1] == "":
			req.Header.Del(hdr[i])
		default:
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		f.t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		f.t.Fatalf("%s %s: answer is not a JSON object: %v\n%s", method, path, err, rec.Body.String())
	}
	for _, s := range []string{rwSecret, roSecret} {
		if strings.Contains(rec.Body.String(), s) {
			f.t.Errorf("%s %s: the answer holds a token secret", method, path)
		}
	}
	return rec.Code, out, rec.Header()
}

// errOf returns the error answer's code and field.
func errOf(t *testing.T, body map[string]any) (code, field string) {
	t.Helper()
	e, ok := body["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object in %v", body)
	}
	if m, _ := e["message"].(string); m == "" {
		t.Errorf("error without a message: %v", e)
	}
	code, _ = e["code"].(string)
	field, _ = e["field"].(string)
	return code, field
}

func TestAuth(t *testing.T) {
	f := newFixture(t, true)
	for _, tc := range []struct {
		method, path, token, body string
		status                    int
		code                      string
	}{
		{"GET", "/v1/jobs", "", "", 401, CodeUnauthorized},
		{"GET", "/v1/jobs", "wrong-secret-0123456789abcdef", "", 401, CodeUnauthorized},
		{"GET", "/v1/jobs", rwSecret[:len(rwSecret)-1], "", 401, CodeUnauthorized},
		{"GET", "/v1/jobs", roSecret, "", 200, ""},
		{"GET", "/v1/jobs", rwSecret, "", 200, ""},
		{"POST", "/v1/backups", roSecret, `{}`, 403, CodeForbidden},
		{"POST", "/v1/jobs/main:a/cancel", roSecret, "", 403, CodeForbidden},
		{"POST", "/v1/backups", rwSecret, `{}`, 202, ""},
		{"GET", "/v1/openapi.json", "", "", 200, ""},
	} {
		status, body, hdr := f.do(tc.method, tc.path, tc.token, tc.body)
		if status != tc.status {
			t.Errorf("%s %s with token %.6q: status %d, want %d (%v)", tc.method, tc.path, tc.token, status, tc.status, body)
			continue
		}
		if tc.code != "" {
			if code, _ := errOf(t, body); code != tc.code {
				t.Errorf("%s %s: code %q, want %q", tc.method, tc.path, code, tc.code)
			}
		}
		if status == 401 && !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("401 without WWW-Authenticate: Bearer")
		}
	}
	if n := len(f.jobs.started); n != 1 {
		t.Errorf("%d jobs started, want 1 (the read-write token's)", n)
	}
	for _, s := range []string{rwSecret, roSecret} {
		if strings.Contains(f.log.String(), s) {
			t.Error("the log holds a token secret")
		}
	}
	if !strings.Contains(f.log.String(), "token=ops") {
		t.Errorf("the log does not name the token: %s", f.log.String())
	}
}

func TestParseTokensRefuses(t *testing.T) {
	for _, text := range []string{
		"rw short",
		"admin " + rwSecret,
		"rw " + rwSecret + "\nro " + rwSecret,
		"rw",
	} {
		if _, err := ParseTokens(text, "t"); err == nil {
			t.Errorf("%q: accepted", text)
		} else if strings.Contains(err.Error(), rwSecret) {
			t.Errorf("%q: the error holds the secret: %v", text, err)
		}
	}
}

func TestRequestChecks(t *testing.T) {
	f := newFixture(t, false)
	big := `{"label": "` + strings.Repeat("x", 2000) + `"}`
	for _, tc := range []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		code, field              string
	}{
		{"unknown field", "POST", "/v1/backups", `{"source": "main", "sauce": 1}`, nil, 400, CodeUnknownField, "sauce"},
		{"wrong type", "POST", "/v1/backups", `{"parallel": "two"}`, nil, 400, CodeBadRequest, "parallel"},
		{"two values", "POST", "/v1/backups", `{} {}`, nil, 400, CodeBadRequest, ""},
		{"not JSON", "POST", "/v1/backups", `{source`, nil, 400, CodeBadRequest, ""},
		{"too large", "POST", "/v1/backups", big, nil, 413, CodeTooLarge, ""},
		{"media type", "POST", "/v1/backups", `{}`, []string{"Content-Type", "text/plain"}, 415, CodeMediaType, ""},
		{"bad label", "POST", "/v1/backups", `{"label": "a:b"}`, nil, 400, CodeBadRequest, "label"},
		{"bad tables", "POST", "/v1/backups", `{"tables": ["app.t1", "t2"]}`, nil, 400, CodeBadRequest, "tables"},
		{"bad source", "POST", "/v1/refreshes", `{"source": "../x"}`, nil, 400, CodeBadRequest, "source"},
		// A refresh carries no retention policy: the worker's applies.
		{"refresh policy", "POST", "/v1/refreshes", `{"keep_snapshots": 3}`, nil, 400, CodeUnknownField, "keep_snapshots"},
		{"unknown param", "GET", "/v1/jobs?kindd=backup", "", nil, 400, CodeUnknownField, "kindd"},
		{"bad kind", "GET", "/v1/jobs?kind=nap", "", nil, 400, CodeBadRequest, "kind"},
		{"bad state", "GET", "/v1/jobs?state=asleep", "", nil, 400, CodeBadRequest, "state"},
		{"bad limit", "GET", "/v1/jobs?limit=100000", "", nil, 400, CodeBadRequest, "limit"},
		{"no route", "GET", "/v2/jobs", "", nil, 404, CodeNotFound, ""},
		{"method", "DELETE", "/v1/jobs", "", nil, 405, CodeMethodNotAllowed, ""},
		{"unknown job", "GET", "/v1/jobs/main:zz", "", nil, 404, CodeNotFound, ""},
		{"export path", "POST", "/v1/exports", `{"format": "sql", "at": "latest", "out": "../etc/x.sql"}`, nil, 400, CodeBadRequest, "out"},
		{"export abs", "POST", "/v1/exports", `{"format": "sql", "at": "latest", "out": "/etc/x.sql"}`, nil, 400, CodeBadRequest, "out"},
		{"export no at", "POST", "/v1/exports", `{"format": "parquet", "out": "x"}`, nil, 400, CodeBadRequest, "at"},
		{"export bad at", "POST", "/v1/exports", `{"format": "parquet", "at": "yesterday-ish", "out": "x"}`, nil, 400, CodeBadRequest, "at"},
		{"export range", "POST", "/v1/exports", `{"format": "changes", "from": "latest", "out": "x"}`, nil, 400, CodeBadRequest, "until"},
		{"export format", "POST", "/v1/exports", `{"format": "csv", "at": "latest", "out": "x"}`, nil, 400, CodeBadRequest, "format"},
		{"restore target", "POST", "/v1/restores", `{"at": "latest"}`, nil, 400, CodeBadRequest, "target"},
		{"restore passthrough", "POST", "/v1/restores", `{"target": "shop", "input": {"Target": {"DSN": "x@tcp(127.0.0.1:1)/?allowAllFiles=true", "PasswordFile": "/proc/self/environ"}}}`,
			nil, 400, CodeUnknownField, "input"},
		{"restore dsn", "POST", "/v1/restores", `{"target": "x@tcp(127.0.0.1:1)/", "at": "latest"}`, nil, 400, CodeBadRequest, "target"},
		{"restore throttle", "POST", "/v1/restores", `{"target": "db1", "at": "latest", "throttle_query": "SELECT 1"}`, nil, 400, CodeUnknownField, "throttle_query"},
		{"restore no at", "POST", "/v1/restores", `{"target": "db1"}`, nil, 400, CodeBadRequest, "at"},
		{"restore parallel", "POST", "/v1/restores", `{"target": "db1", "at": "latest", "parallel": 100000}`, nil, 400, CodeBadRequest, "parallel"},
		{"restore limits", "POST", "/v1/restores", `{"target": "db1", "at": "latest", "max_load": -1}`, nil, 400, CodeBadRequest, "limits"},
		{"query off", "POST", "/v1/query", `{"sql": "SELECT 1"}`, nil, 501, CodeNotConfigured, ""},
		{"catalog off", "GET", "/v1/snapshots", "", nil, 501, CodeNotConfigured, ""},
	} {
		status, body, hdr := f.do(tc.method, tc.path, "", tc.body, tc.hdr...)
		if status != tc.status {
			t.Errorf("%s: status %d, want %d (%v)", tc.name, status, tc.status, body)
			continue
		}
		code, field := errOf(t, body)
		if code != tc.code || field != tc.field {
			t.Errorf("%s: code %q field %q, want %q %q", tc.name, code, field, tc.code, tc.field)
		}
		if status == 405 && hdr.Get("Allow") != "GET" {
			t.Errorf("405 Allow %q", hdr.Get("Allow"))
		}
	}
	if len(f.jobs.started) != 0 {
		t.Errorf("refused requests started %v", f.jobs.started)
	}
}

func TestStarts(t *testing.T) {
	f := newFixture(t, false)
	for _, tc := range []struct {
		path, body string
		want       jobs.Request
	}{
		{"/v1/backups", `{"label": "nightly-1", "parallel": 3}`, jobs.Request{Kind: jobs.Backup, Source: "main", Label: "nightly-1",
			Input: payload.FullBackupInput{Source: "main", Parallel: 3}}},
		{"/v1/refreshes", `{"source": "db2", "table_deltas": false}`, jobs.Request{Kind: jobs.Refresh, Source: "db2",
			Input: payload.RefreshInput{Source: "db2", TableDeltas: false, MaxChainAge: 90 * time.Minute}, Follow: true}},
		{"/v1/verifies", `{"tables": ["shop.orders"]}`, jobs.Request{Kind: jobs.Verify, Source: "main",
			Input: payload.VerifyInput{Source: "main", Snapshot: "current", Tables: []string{"shop.orders"}}}},
		{"/v1/restores", `{"label": "r1", "target": "db1", "at": "latest", "schemas": ["shop"], "into_schema": "shop_copy", "max_lag_ms": 2000}`,
			jobs.Request{Kind: jobs.Restore, Source: "main", Label: "r1", Target: "db1.shop_copy",
				Input: payload.RestoreInput{RestoreSpec: payload.RestoreSpec{Source: "main", At: "latest", Schemas: []string{"shop"},
					IntoSchema: "shop_copy", Target: payload.TargetRef{Name: "db1"}, Limits: throttle.Limits{MaxLag: 2 * time.Second}}}}},
	} {
		f.jobs.started = nil
		status, body, hdr := f.do("POST", tc.path, "", tc.body)
		if status != http.StatusAccepted || len(f.jobs.started) != 1 {
			t.Errorf("%s: status %d, started %v (%v)", tc.path, status, f.jobs.started, body)
			continue
		}
		if got := f.jobs.started[0]; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: started\n %#v\nwant\n %#v", tc.path, got, tc.want)
		}
		if hdr.Get("Location") != "/v1/jobs/"+body["id"].(string) {
			t.Errorf("%s: Location %q", tc.path, hdr.Get("Location"))
		}
	}
	f.jobs.started = nil
	status, _, _ := f.do("POST", "/v1/exports", "", `{"label": "x1", "format": "changes", "from": "seq:10", "until": "latest", "out": "changes-1"}`)
	if status != 202 {
		t.Fatalf("export: %d", status)
	}
	in := f.jobs.started[0].Input.(payload.ExportInput)
	if in.Out != "/exports/changes-1" || in.From != "seq:10" || in.Until != "latest" || in.Format != "changes" {
		t.Errorf("export input %+v", in)
	}
}

func TestConflicts(t *testing.T) {
	f := newFixture(t, false)
	f.jobs.startFn = func(req jobs.Request) (jobs.Job, error) {
		if req.Label == "taken" {
			return jobs.Job{}, &jobs.ConflictError{Reason: jobs.ConflictLabel, JobID: "main:taken", Message: "label taken"}
		}
		return jobs.Job{}, &jobs.ConflictError{Reason: jobs.ConflictRunning, JobID: "main:other", Message: "running"}
	}
	for _, tc := range []struct{ body, code, job string }{
		{`{"label": "taken"}`, CodeLabelTaken, "main:taken"},
		{`{"label": "fresh"}`, CodeJobRunning, "main:other"},
	} {
		status, body, _ := f.do("POST", "/v1/backups", "", tc.body)
		code, _ := errOf(t, body)
		if status != 409 || code != tc.code || body["error"].(map[string]any)["job_id"] != tc.job {
			t.Errorf("%s: %d %v, want 409 %s with job_id %s", tc.body, status, body, tc.code, tc.job)
		}
	}
}

func TestListJobs(t *testing.T) {
	f := newFixture(t, false)
	status, body, _ := f.do("GET", "/v1/jobs?kind=export&state=failed&label=x1&source=main&limit=5", "", "")
	if status != 200 || f.jobs.size != 5 || f.jobs.filter != (jobs.Filter{Kind: jobs.Export, State: jobs.Failed, Label: "x1", Source: "main"}) {
		t.Fatalf("list: %d %v, filter %+v size %d", status, body, f.jobs.filter, f.jobs.size)
	}
	if body["next_page_token"] == "" || len(body["jobs"].([]any)) != 1 {
		t.Errorf("list answer %v", body)
	}
}

// TestOpenAPIMatchesRoutes: the document lists exactly the routes, each
// request body's schema has exactly the JSON fields of its Go type and
// refuses others, and query parameters match.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]struct {
			Parameters []struct {
				Name string `json:"name"`
				In   string `json:"in"`
			} `json:"parameters"`
			RequestBody *struct {
				Content map[string]struct {
					Schema struct {
						Ref string `json:"$ref"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
			Responses map[string]any `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				AdditionalProperties *bool          `json:"additionalProperties"`
				Properties           map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(openapiDoc, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi version %q", doc.OpenAPI)
	}
	seen := map[string]bool{}
	for _, rt := range routes() {
		key := strings.ToLower(rt.method) + " " + rt.path
		seen[key] = true
		op, ok := doc.Paths[rt.path][strings.ToLower(rt.method)]
		if !ok {
			t.Errorf("%s is not in the document", key)
			continue
		}
		if len(op.Responses) == 0 {
			t.Errorf("%s: no responses", key)
		}
		var params []string
		for _, p := range op.Parameters {
			if p.In == "query" {
				params = append(params, p.Name)
			}
		}
		if !slices.Equal(params, rt.params) {
			t.Errorf("%s: document parameters %v, route %v", key, params, rt.params)
		}
		if (op.RequestBody != nil) != (rt.body != nil) {
			t.Errorf("%s: document body %v, route body %v", key, op.RequestBody != nil, rt.body != nil)
			continue
		}
		if rt.body == nil {
			continue
		}
		ref := op.RequestBody.Content["application/json"].Schema.Ref
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		schema, ok := doc.Components.Schemas[name]
		if !ok {
			t.Errorf("%s: body schema %q missing", key, ref)
			continue
		}
		if schema.AdditionalProperties == nil || *schema.AdditionalProperties {
			t.Errorf("%s: schema %s does not refuse unknown fields", key, name)
		}
		typ := reflect.TypeOf(rt.body()).Elem()
		var fields, props []string
		for i := range typ.NumField() {
			fields = append(fields, strings.Split(typ.Field(i).Tag.Get("json"), ",")[0])
		}
		for p := range schema.Properties {
			props = append(props, p)
		}
		slices.Sort(fields)
		slices.Sort(props)
		if !slices.Equal(fields, props) {
			t.Errorf("%s: %s fields %v, schema properties %v", key, typ.Name(), fields, props)
		}
	}
	for p, ops := range doc.Paths {
		for m := range ops {
			if !seen[m+" "+p] {
				t.Errorf("the document lists %s %s, which is no route", m, p)
			}
		}
	}
}

func TestListenRefusesOpenAddressWithoutTokens(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:8280"} {
		if ln, err := Listen(ServeConfig{Addr: addr}); err == nil {
			ln.Close()
			t.Errorf("%s without tokens: listening", addr)
		} else if !strings.Contains(err.Error(), "not loopback") {
			t.Errorf("%s: %v", addr, err)
		}
	}
	ln, err := Listen(ServeConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatalf("loopback without tokens: %v", err)
	}
	ln.Close()
	if ln, err := Listen(ServeConfig{Addr: "127.0.0.1:0", TLSCert: "x.pem"}); err == nil {
		ln.Close()
		t.Error("--tls-cert without --tls-key: listening")
	}
}

// TestServeShutsDown: Serve answers until its context ends, then returns
// nil.
func TestServeShutsDown(t *testing.T) {
	ln, err := Listen(ServeConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, false, func(c *Config) { c.Addr = ln.Addr().String() })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, f.h) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}
