package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/embedded"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/testsuite"
)

// TestCLIOverMTLS runs the dbtrail binary against an embedded server whose
// frontend requires client certificates: `dbtrail jobs` with the client
// certificate (as flags, and as DBTRAIL_TEMPORAL_TLS_* variables) lists a
// job started there; without a certificate it is refused. `dbtrail dev`
// refuses a frontend address beyond loopback without TLS, naming the
// address and the flags, before it needs anything else.
func TestCLIOverMTLS(t *testing.T) {
	bin := buildDbtrail(t)
	dir := t.TempDir()
	certs, err := testsuite.NewCerts(dir, "cli")
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	own := temporalclient.TLSFiles{CertFile: certs.ClientCert, KeyFile: certs.ClientKey, CAFile: certs.CA}
	srv, err := embedded.StartServer(ctx, embedded.ServerConfig{DataDir: filepath.Join(dir, "temporal"), FrontendAddr: "127.0.0.1:0",
		TLS: &embedded.FrontendTLS{CertFile: certs.ServerCert, KeyFile: certs.ServerKey, ClientCAFile: certs.CA, Client: own}})
	must(t, err)
	t.Cleanup(srv.Stop)
	c, err := srv.Connection().Dial(ctx, nil)
	must(t, err)
	t.Cleanup(c.Close)
	// A job no worker picks up: listed as running.
	_, err = jobs.New(jobs.Config{Client: c, TaskQueue: payload.TaskQueue}).Start(ctx, jobs.Request{Kind: jobs.Backup, Source: "main",
		Label: "tls-1", Input: payload.FullBackupInput{Source: "main"}})
	must(t, err)

	run := func(env []string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	addr := []string{"jobs", "--temporal-addr", srv.FrontendAddr()}
	listed := false
	for try := 0; try < 60 && !listed; try++ { // visibility lags
		out, err := run(nil, append(addr, "--temporal-tls-cert", certs.ClientCert, "--temporal-tls-key", certs.ClientKey, "--temporal-tls-ca", certs.CA)...)
		if err != nil {
			t.Fatalf("dbtrail jobs with a client certificate: %v\n%s", err, out)
		}
		listed = strings.Contains(out, "main:tls-1")
		if !listed {
			time.Sleep(500 * time.Millisecond)
		}
	}
	if !listed {
		t.Fatal("dbtrail jobs with a client certificate does not list main:tls-1")
	}
	out, err := run([]string{"DBTRAIL_TEMPORAL_TLS_CERT=" + certs.ClientCert, "DBTRAIL_TEMPORAL_TLS_KEY=" + certs.ClientKey,
		"DBTRAIL_TEMPORAL_TLS_CA=" + certs.CA}, addr...)
	if err != nil || !strings.Contains(out, "main:tls-1") {
		t.Fatalf("dbtrail jobs with DBTRAIL_TEMPORAL_TLS_*: %v\n%s", err, out)
	}
	out, err = run(nil, append(addr, "--temporal-tls-ca", certs.CA)...)
	if err == nil || !strings.Contains(out, "connect to Temporal at "+srv.FrontendAddr()) {
		t.Fatalf("dbtrail jobs without a client certificate: %v\n%s", err, out)
	}

	out, err = run(nil, "dev", "--data-dir", filepath.Join(dir, "dev"), "--frontend-addr", "0.0.0.0:7233", "--sql-addr", "")
	if err == nil || !strings.Contains(out, "frontend address 0.0.0.0:7233") || !strings.Contains(out, "--frontend-tls-client-ca") {
		t.Fatalf("dbtrail dev on 0.0.0.0 without TLS: %v\n%s", err, out)
	}
}
