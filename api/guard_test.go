package api

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCrossSite: a POST without Content-Type: application/json (none,
// text/plain, a form; a body-less cancel too), a Host that does not name
// the server (DNS rebinding, GET included), an Origin that is not the
// server's own and Sec-Fetch-Site: cross-site are refused before anything
// is done; the server's own names and origins, a configured proxy name and
// a JSON type with parameters are accepted.
func TestCrossSite(t *testing.T) {
	f := newFixture(t, false, func(c *Config) { c.Hosts = []string{"backup.example.com", "proxy.test:9443"} })
	for _, tc := range []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		code, says               string
	}{
		{"no content type", "POST", "/v1/backups", `{}`, []string{"Content-Type", ""}, 415, CodeMediaType, "application/json"},
		{"text/plain", "POST", "/v1/backups", `{}`, []string{"Content-Type", "text/plain"}, 415, CodeMediaType, "text/plain"},
		{"form", "POST", "/v1/backups", `a=b`, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, CodeMediaType, ""},
		{"multipart", "POST", "/v1/refreshes", `{}`, []string{"Content-Type", "multipart/form-data; boundary=x"}, 415, CodeMediaType, ""},
		{"cancel without type", "POST", "/v1/jobs/main:a/cancel", "", []string{"Content-Type", ""}, 415, CodeMediaType, "Content-Type"},
		{"query without type", "POST", "/v1/query", `{"sql": "SELECT 1"}`, []string{"Content-Type", ""}, 415, CodeMediaType, ""},
		{"rebinding POST", "POST", "/v1/backups", `{}`, []string{"Host", "evil.test"}, 421, CodeWrongHost, "evil.test"},
		{"rebinding GET", "GET", "/v1/jobs", "", []string{"Host", "evil.test:8280"}, 421, CodeWrongHost, "evil.test:8280"},
		{"rebinding openapi", "GET", "/v1/openapi.json", "", []string{"Host", "evil.test"}, 421, CodeWrongHost, ""},
		{"rebinding no route", "GET", "/nothing", "", []string{"Host", "evil.test"}, 421, CodeWrongHost, ""},
		{"other port", "GET", "/v1/jobs", "", []string{"Host", "127.0.0.1:8281"}, 421, CodeWrongHost, ""},
		{"no port", "GET", "/v1/jobs", "", []string{"Host", "127.0.0.1"}, 421, CodeWrongHost, ""},
		{"other proxy port", "GET", "/v1/jobs", "", []string{"Host", "proxy.test:9444"}, 421, CodeWrongHost, ""},
		{"empty host", "GET", "/v1/jobs", "", []string{"Host", ""}, 421, CodeWrongHost, ""},
		{"foreign origin", "POST", "/v1/backups", `{}`, []string{"Origin", "http://evil.test"}, 403, CodeCrossSite, "http://evil.test"},
		{"foreign origin GET", "GET", "/v1/jobs", "", []string{"Origin", "http://evil.test"}, 403, CodeCrossSite, ""},
		{"foreign origin query", "POST", "/v1/query", `{"sql": "SELECT 1"}`, []string{"Origin", "http://evil.test:8280"}, 403, CodeCrossSite, ""},
		{"null origin", "POST", "/v1/backups", `{}`, []string{"Origin", "null"}, 403, CodeCrossSite, ""},
		{"other scheme", "GET", "/v1/jobs", "", []string{"Origin", "https://127.0.0.1:8280"}, 403, CodeCrossSite, ""},
		{"sibling port", "GET", "/v1/jobs", "", []string{"Origin", "http://127.0.0.1:3000"}, 403, CodeCrossSite, ""},
		{"cross-site fetch", "GET", "/v1/jobs", "", []string{"Sec-Fetch-Site", "cross-site"}, 403, CodeCrossSite, "cross-site"},
		{"cross-site post", "POST", "/v1/backups", `{}`, []string{"Sec-Fetch-Site", "cross-site"}, 403, CodeCrossSite, ""},
		{"unknown job", "POST", "/v1/jobs/main:zz/cancel", "", nil, 404, CodeNotFound, ""},
	} {
		status, body, _ := f.do(tc.method, tc.path, "", tc.body, tc.hdr...)
		if status != tc.status {
			t.Errorf("%s: status %d, want %d (%v)", tc.name, status, tc.status, body)
			continue
		}
		code, _ := errOf(t, body)
		msg, _ := body["error"].(map[string]any)["message"].(string)
		if code != tc.code || !strings.Contains(msg, tc.says) {
			t.Errorf("%s: code %q message %q, want %q saying %q", tc.name, code, msg, tc.code, tc.says)
		}
	}
	if len(f.jobs.started) != 0 {
		t.Fatalf("refused requests started %v", f.jobs.started)
	}
	if !strings.Contains(f.log.String(), "request refused") || !strings.Contains(f.log.String(), "host=evil.test") {
		t.Errorf("the refusals are not logged with the host: %s", f.log.String())
	}
	for _, hdr := range [][]string{
		nil,
		{"Host", "localhost:8280"},
		{"Host", "LOCALHOST:8280"},
		{"Host", "[::1]:8280"},
		{"Host", "backup.example.com"},
		{"Host", "backup.example.com:443"},
		{"Host", "proxy.test:9443"},
		{"Origin", "http://127.0.0.1:8280"},
		{"Origin", "http://localhost:8280"},
		{"Origin", "https://backup.example.com"},
		{"Sec-Fetch-Site", "same-origin"},
		{"Sec-Fetch-Site", "none"},
		{"Content-Type", "application/json; charset=utf-8"},
	} {
		n := len(f.jobs.started)
		if status, body, _ := f.do("POST", "/v1/backups", "", `{}`, hdr...); status != 202 || len(f.jobs.started) != n+1 {
			t.Errorf("%v: status %d (%v), want 202 and a start", hdr, status, body)
		}
		if status, body, _ := f.do("POST", "/v1/jobs/main:a/cancel", "", "", hdr...); status != 202 {
			t.Errorf("%v: cancel status %d (%v), want 202", hdr, status, body)
		}
	}
}

// TestHosts: what each kind of listener answers to.
func TestHosts(t *testing.T) {
	local := func(ip net.IP) bool { return ip.IsLoopback() || ip.Equal(net.ParseIP("10.1.2.3")) }
	for _, tc := range []struct {
		addr string
		ok   []string
		not  []string
	}{
		{"127.0.0.1:8280", []string{"127.0.0.1:8280", "localhost:8280", "[::1]:8280"}, []string{"10.1.2.3:8280", "evil.test:8280", "127.0.0.1:80", "127.0.0.2:8280"}},
		{"10.1.2.3:8280", []string{"10.1.2.3:8280"}, []string{"localhost:8280", "127.0.0.1:8280", "evil.test:8280", "10.1.2.3:8281"}},
		{"0.0.0.0:8280", []string{"10.1.2.3:8280", "127.0.0.1:8280", "localhost:8280"}, []string{"10.9.9.9:8280", "evil.test:8280", "10.1.2.3:80"}},
		{"[::]:8280", []string{"[::1]:8280", "10.1.2.3:8280"}, []string{"evil.test:8280"}},
		{"localhost:8280", []string{"localhost:8280", "127.0.0.1:8280"}, []string{"evil.test:8280"}},
	} {
		h, err := newHosts(tc.addr, nil, false)
		if err != nil {
			t.Fatalf("%s: %v", tc.addr, err)
		}
		h.local = local
		for _, hp := range tc.ok {
			if !h.allowed(split(hp, "80")) {
				t.Errorf("listening on %s: Host %s refused", tc.addr, hp)
			}
		}
		for _, hp := range tc.not {
			if h.allowed(split(hp, "80")) {
				t.Errorf("listening on %s: Host %s accepted", tc.addr, hp)
			}
		}
	}
	for _, bad := range []string{"http://x", "a/b", "x:port", ""} {
		if _, err := newHosts("127.0.0.1:8280", []string{bad}, false); err == nil {
			t.Errorf("--api-host %q accepted", bad)
		}
	}
	if _, err := newHosts("127.0.0.1:0", nil, false); err == nil {
		t.Error("port 0 accepted as the listener's address")
	}
	if _, err := New(Config{Jobs: &fakeJobs{}}); err == nil {
		t.Error("New without Addr")
	}
}

// TestRateLimit: a token's requests past its burst answer 429 with
// Retry-After until the bucket refills; each token (without tokens, each
// remote address) has its own bucket; failed authentications are charged
// to the address.
func TestRateLimit(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	f := newFixture(t, true, func(c *Config) { c.Rate, c.Now = 1, clock })
	for i := range 2 {
		if status, body, _ := f.do("GET", "/v1/jobs", roSecret, ""); status != 200 {
			t.Fatalf("request %d within the burst: %d %v", i, status, body)
		}
	}
	status, body, hdr := f.do("GET", "/v1/jobs", roSecret, "")
	if code, _ := errOf(t, body); status != 429 || code != CodeRateLimited || hdr.Get("Retry-After") != "1" {
		t.Fatalf("past the burst: %d %v Retry-After %q", status, body, hdr.Get("Retry-After"))
	}
	if status, _, _ := f.do("GET", "/v1/jobs", rwSecret, ""); status != 200 {
		t.Fatalf("another token is limited by the first's rate: %d", status)
	}
	now = now.Add(time.Second)
	if status, _, _ := f.do("GET", "/v1/jobs", roSecret, ""); status != 200 {
		t.Fatalf("a second later: %d", status)
	}
	for range 2 {
		f.do("GET", "/v1/jobs", "wrong-secret-0123456789abcdef", "")
	}
	if status, _, hdr := f.do("GET", "/v1/jobs", "wrong-secret-0123456789abcdef", ""); status != 429 || hdr.Get("Retry-After") == "" {
		t.Fatalf("guessing tokens past the rate: %d", status)
	}

	open := newFixture(t, false, func(c *Config) { c.Rate, c.Now = 1, clock })
	for range 2 {
		open.do("GET", "/v1/jobs", "", "")
	}
	if status, _, _ := open.do("GET", "/v1/jobs", "", ""); status != 429 {
		t.Fatalf("no tokens, one address past its rate: %d", status)
	}
	if status, _, _ := open.do("GET", "/v1/jobs", "", "", "RemoteAddr", "192.0.2.9:5555"); status != 200 {
		t.Fatalf("no tokens, another address limited by the first's rate: %d", status)
	}
	if !strings.Contains(open.log.String(), "status=429") {
		t.Error("a 429 is not logged")
	}
}

// TestEnsureTokenFile: the file is made once (0600, one read-write token
// of 64 hex characters), read as it is afterwards, and refused when others
// may read it.
func TestEnsureTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dev", DevTokenFile)
	toks, created, err := EnsureTokenFile(path)
	if err != nil || !created || len(toks) != 1 || !toks[0].Write || toks[0].Name != DevTokenName {
		t.Fatalf("first: %v created %v tokens %+v", err, created, toks)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v %v", st.Mode(), err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if len(f) != 3 || f[0] != "rw" || len(f[1]) != 64 || strings.Trim(f[1], "0123456789abcdef") != "" {
		t.Fatalf("file %q", b)
	}
	again, created, err := EnsureTokenFile(path)
	if err != nil || created || len(again) != 1 || again[0].sum != toks[0].sum {
		t.Fatalf("second: %v created %v", err, created)
	}
	if b2, _ := os.ReadFile(path); string(b2) != string(b) {
		t.Fatal("the file was rewritten")
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := EnsureTokenFile(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a file others may read: %v", err)
	}
}
