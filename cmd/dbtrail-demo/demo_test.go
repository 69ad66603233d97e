package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/testsuite"
)

// TestDemoSmoke builds dbtrail and dbtrail-demo, runs the demo twice on the
// same folder (20 s, then 5 s: the second run must re-use the data, the
// passwords and Temporal's history) and checks that it exits 0, that the
// Temporal web UI of dbtrail dev answers while it runs, that it prints the
// "what to look at" block with the UI, the snapshot and the views, that
// each run published a full backup of the shop tables, and that the index
// holds events of the sample schema. It starts real MariaDB servers and
// fails, never skips, when they cannot start; only -short leaves it out.
func TestDemoSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the demo smoke test starts real servers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	bin, err := filepath.EvalSymlinks(t.TempDir()) // as the demo finds dbtrail next to itself
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"dbtrail", "dbtrail-demo"} {
		build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, pkg), "github.com/dbtrail/dbtrail/cmd/"+pkg)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build cmd/%s: %v\n%s", pkg, err, out)
		}
	}
	dir := t.TempDir()
	ports := freePorts(t, 8)
	sourcePort, indexPort, metricsPort, frontendPort, uiPort, s3Port := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]
	apiBase := "http://127.0.0.1:" + strconv.Itoa(ports[6])
	sqlPort := strconv.Itoa(ports[7])
	uiURL := "http://127.0.0.1:" + strconv.Itoa(uiPort) + "/namespaces/default/workflows"
	current := filepath.Join(dir, "backups", "main", "current")
	viewsFile := filepath.Join(dir, "backups", "main", "views.sql")
	demo := func(duration string) string {
		t.Helper()
		start := time.Now()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "dbtrail-demo"),
			"--dir", dir, "--duration", duration,
			"--source-port", strconv.Itoa(sourcePort), "--index-port", strconv.Itoa(indexPort),
			"--metrics-addr", "127.0.0.1:"+strconv.Itoa(metricsPort),
			"--frontend-addr", "127.0.0.1:"+strconv.Itoa(frontendPort),
			"--ui-addr", "127.0.0.1:"+strconv.Itoa(uiPort), "--s3-port", strconv.Itoa(s3Port),
			"--api-addr", strings.TrimPrefix(apiBase, "http://"), "--sql-addr", "127.0.0.1:"+sqlPort)
		var out syncBuffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.WaitDelay = 10 * time.Second
		if err := cmd.Start(); err != nil {
			t.Fatalf("start dbtrail-demo: %v", err)
		}
		done := make(chan struct{})
		uiOK := make(chan error, 1)
		go func() { uiOK <- pollOK(ctx, uiURL, done) }()
		err := cmd.Wait()
		close(done)
		uiErr := <-uiOK
		t.Logf("dbtrail-demo --duration %s ran %s; output:\n%s", duration, time.Since(start).Round(time.Millisecond), out.String())
		if err != nil {
			t.Fatalf("dbtrail-demo --duration %s: %v (want exit status 0)", duration, err)
		}
		if uiErr != nil {
			t.Errorf("dbtrail-demo --duration %s: the Temporal UI never answered 200 while the demo ran: %v", duration, uiErr)
		}
		all := out.String()
		if !strings.Contains(all, "stopping both servers") {
			t.Errorf("dbtrail-demo --duration %s: output lacks %q", duration, "stopping both servers")
		}
		_, block, ok := strings.Cut(all, blockTitle)
		block, _, ended := strings.Cut(block, blockEnd)
		if !ok || !ended {
			t.Fatalf("dbtrail-demo --duration %s: no complete %q block in the output", duration, blockTitle)
		}
		for _, want := range []string{
			uiURL,
			"The full backup took",
			current,
			viewsFile,
			"duckdb -init " + viewsFile,
			filepath.Join(bin, "dbtrail") + " query --backup-dir " + filepath.Join(dir, "backups") + ` "SELECT status, count(*) AS orders, sum(total) AS total FROM shop.orders`,
			"| orders | total",
			filepath.Join(bin, "dbtrail") + " query --backup-dir " + filepath.Join(dir, "backups") + "\n",
			"set -a; . " + filepath.Join(dir, "env") + "; set +a; " + filepath.Join(bin, "dbtrail") + " backup full --temporal-addr 127.0.0.1:" + strconv.Itoa(frontendPort),
			"http://127.0.0.1:" + strconv.Itoa(metricsPort) + "/metrics",
			"set -a; . " + filepath.Join(dir, "env") + "; set +a; " + filepath.Join(bin, "dbtrail") + " status",
			"mariadb --defaults-extra-file=" + filepath.Join(dir, "index.cnf") + " dbtrail -e",
			filepath.Join(bin, "dbtrail") + " restore --temporal-addr 127.0.0.1:" + strconv.Itoa(frontendPort) + " --source main --target scratch --at latest --schema shop --into-schema shop_restored --checkpoint-schema shop_restored",
			"| restored main at latest into ",
			"|   cut: transaction GTID",
			"shop_restored.orders",
			api.Curl(filepath.Join(dir, "dev", api.DevTokenFile)) + " -X POST " + apiBase + `/v1/verifies -d '{"source":"main","label":"demo-verify-`,
			`| {"id":"main:demo-verify-`,
			api.Curl(filepath.Join(dir, "dev", api.DevTokenFile)) + " " + apiBase + "/v1/jobs/main:demo-verify-",
			`"state":"completed"`,
			`"verdict":"`,
			"The console in the browser (docs/console.md): " + apiBase + "/ (log in with a token of " + filepath.Join(dir, "dev", api.DevTokenFile) + ")",
			"mariadb -h 127.0.0.1 -P " + sqlPort + " -u " + api.DevTokenName + ` -p"$(awk`,
		} {
			if !strings.Contains(block, want) {
				t.Errorf("dbtrail-demo --duration %s: the block lacks %q", duration, want)
			}
		}
		if strings.Contains(block, "FAILED") {
			t.Errorf("dbtrail-demo --duration %s: something failed in the block", duration)
		}
		if strings.Contains(block, "not answering right now") {
			t.Errorf("dbtrail-demo --duration %s: the metrics endpoint or the Temporal UI did not answer", duration)
		}
		checkSnapshot(t, current)
		checkRemoteCopy(t, dir, current)
		if _, err := os.Stat(viewsFile); err != nil {
			t.Errorf("views file: %v", err)
		}
		return all
	}

	first := demo("20s")
	if st, err := os.Stat(filepath.Join(dir, "dev", api.DevTokenFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("dev's token file: %v (want mode 0600)", err)
	}
	if !strings.Contains(first, "created sample database shop") {
		t.Errorf("first run did not create the sample database")
	}
	for _, name := range []string{"env", "index.cnf", "source.cnf"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
	passwords := readEnvPasswords(t, filepath.Join(dir, "env"))
	if _, err := os.Stat(filepath.Join(dir, "dev", "temporal.db")); err != nil {
		t.Errorf("Temporal history of dbtrail dev: %v", err)
	}
	firstSnapshot, _ := os.Readlink(current)

	second := demo("5s")
	if !strings.Contains(second, "re-using sample database shop") {
		t.Errorf("second run did not re-use the sample database")
	}
	if again := readEnvPasswords(t, filepath.Join(dir, "env")); again != passwords {
		t.Errorf("the second run changed the passwords in the env file")
	}
	if snap, _ := os.Readlink(current); snap == firstSnapshot {
		t.Errorf("the second run published no new snapshot (current is still %s)", snap)
	}

	// Bring the servers back on the demo's data and ports, and look.
	env, err := testsuite.StartPersistent(ctx, dir, sourcePort, indexPort)
	if err != nil {
		t.Fatalf("restart the demo's servers: %v", err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	}()
	idx, err := env.Index.DB(ctx, testsuite.IndexDatabase)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	var n int64
	if err := idx.QueryRowContext(ctx, "SELECT COUNT(*) FROM events WHERE schema_name = 'shop'").Scan(&n); err != nil {
		t.Fatalf("count shop events in the index: %v", err)
	}
	t.Logf("index holds %d events of schema shop", n)
	if n == 0 {
		t.Fatal("the index holds no events of schema shop")
	}
	checkQueryFormats(ctx, t, filepath.Join(bin, "dbtrail"), filepath.Join(dir, "backups"), env)
	// The client command of the block works as printed, without a password
	// on the command line.
	client := exec.CommandContext(ctx, "mariadb", "--defaults-extra-file="+filepath.Join(dir, "index.cnf"), "dbtrail", "-e", newestQuery)
	out, err := client.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "shop") {
		t.Errorf("mariadb --defaults-extra-file=index.cnf: %v\n%s", err, out)
	}
}

// checkQueryFormats runs `dbtrail query` on the demo's backup in each
// format and wants the sample products (whose sku, title and price the
// traffic never changes) as the source has them.
func checkQueryFormats(ctx context.Context, t *testing.T, dbtrail, backupDir string, env *testsuite.Env) {
	t.Helper()
	src, err := env.Source.DB(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	const q = "SELECT sku, title, price FROM shop.products ORDER BY sku"
	rows, err := src.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var live [][3]string
	for rows.Next() {
		var r [3]string
		if err := rows.Scan(&r[0], &r[1], &r[2]); err != nil {
			t.Fatal(err)
		}
		live = append(live, r)
	}
	if err := rows.Close(); err != nil || len(live) == 0 {
		t.Fatalf("products on the source: %d rows, %v", len(live), err)
	}
	for _, format := range []string{"table", "csv", "json"} {
		out, err := exec.CommandContext(ctx, dbtrail, "query", "--backup-dir", backupDir, "--format", format, q).Output()
		if err != nil {
			t.Errorf("dbtrail query --format %s: %v", format, err)
			continue
		}
		if want := productsOutput(format, live); string(out) != want {
			t.Errorf("dbtrail query --format %s:\n got:\n%s\nwant:\n%s", format, out, want)
		}
	}
}

// productsOutput is how `dbtrail query` prints the products in format.
func productsOutput(format string, rows [][3]string) string {
	var b strings.Builder
	switch format {
	case "csv":
		b.WriteString("sku,title,price\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "%s,%s,%s\n", r[0], r[1], r[2])
		}
	case "json":
		for i, r := range rows {
			sep := ",\n"
			if i == 0 {
				sep = "[\n"
			}
			sku, _ := json.Marshal(r[0])
			title, _ := json.Marshal(r[1])
			fmt.Fprintf(&b, `%s{"sku":%s,"title":%s,"price":%s}`, sep, sku, title, r[2])
		}
		b.WriteString("\n]\n")
	default:
		w := [3]int{3, 5, 5}
		for _, r := range rows {
			for i := range r {
				w[i] = max(w[i], utf8.RuneCountInString(r[i]))
			}
		}
		pad := func(s string, n int) string { return strings.Repeat(" ", n-utf8.RuneCountInString(s)) }
		fmt.Fprintf(&b, " sku%s | title%s | price\n", pad("sku", w[0]), pad("title", w[1]))
		fmt.Fprintf(&b, "%s+%s+%s\n", strings.Repeat("-", w[0]+2), strings.Repeat("-", w[1]+2), strings.Repeat("-", w[2]+2))
		for _, r := range rows {
			fmt.Fprintf(&b, " %s%s | %s%s | %s%s\n", r[0], pad(r[0], w[0]), r[1], pad(r[1], w[1]), pad(r[2], w[2]), r[2])
		}
		fmt.Fprintf(&b, "(%d rows)\n", len(rows))
	}
	return b.String()
}

// readEnvPasswords returns the two passwords of the env file, joined.
func readEnvPasswords(t *testing.T, path string) string {
	t.Helper()
	vars, err := testsuite.ReadEnvFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pw []string
	for _, name := range []string{"DBTRAIL_SOURCE_DSN", "DBTRAIL_INDEX_DSN"} {
		cfg, err := mysql.ParseDSN(vars[name])
		if err != nil || cfg.Passwd == "" {
			t.Fatalf("%s in %s: no DSN with a password (%v)", name, path, err)
		}
		pw = append(pw, cfg.Passwd)
	}
	return strings.Join(pw, " ")
}

// freePorts returns n distinct TCP ports that nothing listens on.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	return ports
}

// pollOK gets url every 300 ms until it answers with status 200 (nil),
// done is closed or ctx ends (the last error).
func pollOK(ctx context.Context, url string, done <-chan struct{}) error {
	last := errors.New("not tried")
	for {
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
		if err != nil {
			cancel()
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		last = err
		select {
		case <-done:
			return last
		case <-ctx.Done():
			return last
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// checkSnapshot wants <current>/manifest.json to list the tables of the
// sample schema shop.
func checkSnapshot(t *testing.T, current string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(current, "manifest.json"))
	if err != nil {
		t.Errorf("no published snapshot: %v", err)
		return
	}
	var m struct {
		SnapshotID string `json:"snapshot_id"`
		Tables     []struct {
			Schema string `json:"schema"`
			Table  string `json:"table"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Errorf("manifest.json of %s: %v", current, err)
		return
	}
	have := map[string]bool{}
	for _, tb := range m.Tables {
		have[tb.Schema+"."+tb.Table] = true
	}
	for _, want := range []string{"shop.customers", "shop.products", "shop.orders"} {
		if !have[want] {
			t.Errorf("snapshot %s (%s) lacks table %s; it has %v", m.SnapshotID, current, want, have)
		}
	}
}

// syncBuffer is a bytes.Buffer that several goroutines may use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// checkRemoteCopy requires the demo's S3 server (a posix folder) to hold the
// manifest of the snapshot current names, and a current pointer.
func checkRemoteCopy(t *testing.T, dir, current string) {
	t.Helper()
	target, err := os.Readlink(current)
	if err != nil {
		t.Fatalf("current: %v", err)
	}
	id := filepath.Base(target)
	prefix := filepath.Join(dir, "s3", "data", "dbtrail-demo", "backups", "main")
	if _, err := os.Stat(filepath.Join(prefix, "snapshots", id, "manifest.json")); err != nil {
		t.Errorf("snapshot %s has no manifest on the demo's S3 server: %v", id, err)
	}
	if _, err := os.Stat(filepath.Join(prefix, "current")); err != nil {
		t.Errorf("no current pointer on the demo's S3 server: %v", err)
	}
}
