package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/testsuite"
)

// TestDemoSmoke builds dbtrail and dbtrail-demo, runs the demo twice on the
// same folder (20 s, then 5 s: the second run must re-use the data and the
// passwords) and checks that it exits 0, prints the "what to look at" block
// and that the index holds events of the sample schema. It starts real
// MariaDB servers and fails, never skips, when they cannot start; only
// -short (make unit) leaves it out.
func TestDemoSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the demo smoke test starts real servers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	bin := t.TempDir()
	for _, pkg := range []string{"dbtrail", "dbtrail-demo"} {
		build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, pkg), "github.com/dbtrail/dbtrail/cmd/"+pkg)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build cmd/%s: %v\n%s", pkg, err, out)
		}
	}
	dir := t.TempDir()
	sourcePort, indexPort, metricsPort := freePort(t), freePort(t), freePort(t)
	demo := func(duration string) string {
		t.Helper()
		start := time.Now()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "dbtrail-demo"),
			"--dir", dir, "--duration", duration,
			"--source-port", strconv.Itoa(sourcePort), "--index-port", strconv.Itoa(indexPort),
			"--metrics-addr", "127.0.0.1:"+strconv.Itoa(metricsPort))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.WaitDelay = 10 * time.Second
		err := cmd.Run()
		t.Logf("dbtrail-demo --duration %s ran %s; output:\n%s", duration, time.Since(start).Round(time.Millisecond), out.String())
		if err != nil {
			t.Fatalf("dbtrail-demo --duration %s: %v (want exit status 0)", duration, err)
		}
		for _, want := range []string{
			blockTitle,
			"http://127.0.0.1:" + strconv.Itoa(metricsPort) + "/metrics",
			"set -a; . " + filepath.Join(dir, "env") + "; set +a; ",
			"mariadb --defaults-extra-file=" + filepath.Join(dir, "index.cnf") + " dbtrail -e",
			"stopping both servers",
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("dbtrail-demo --duration %s: output lacks %q", duration, want)
			}
		}
		if strings.Contains(out.String(), "not answering right now") {
			t.Errorf("dbtrail-demo --duration %s: the metrics endpoint did not answer", duration)
		}
		return out.String()
	}

	first := demo("20s")
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

	second := demo("5s")
	if !strings.Contains(second, "re-using sample database shop") {
		t.Errorf("second run did not re-use the sample database")
	}
	if again := readEnvPasswords(t, filepath.Join(dir, "env")); again != passwords {
		t.Errorf("the second run changed the passwords in the env file")
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
	// The client command of the block works as printed, without a password
	// on the command line.
	client := exec.CommandContext(ctx, "mariadb", "--defaults-extra-file="+filepath.Join(dir, "index.cnf"), "dbtrail", "-e", newestQuery)
	out, err := client.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "shop") {
		t.Errorf("mariadb --defaults-extra-file=index.cnf: %v\n%s", err, out)
	}
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

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
