package embedded

import (
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/testsuite"
)

// mtlsConfig is a server config in dir whose frontend requires client
// certificates of certs' CA; the server's own clients use certs' client
// certificate.
func mtlsConfig(t *testing.T, dir string, certs testsuite.Certs) ServerConfig {
	return ServerConfig{DataDir: filepath.Join(dir, "data"), FrontendAddr: "127.0.0.1:0", UIAddr: "127.0.0.1:0", Logger: testLogger(t),
		TLS: &FrontendTLS{CertFile: certs.ServerCert, KeyFile: certs.ServerKey, ClientCAFile: certs.CA,
			Client: temporalclient.TLSFiles{CertFile: certs.ClientCert, KeyFile: certs.ClientKey, CAFile: certs.CA}}}
}

// TestFrontendMTLS runs the embedded server with a TLS frontend that
// requires client certificates: a client with the right certificate runs
// a workflow and a schedule (the server's system worker dials the frontend
// with its certificate too) and the UI reads workflows through it; a
// plaintext client, one without a certificate and one with a certificate
// of another CA are refused.
func TestFrontendMTLS(t *testing.T) {
	dir := t.TempDir()
	certs, err := testsuite.NewCerts(dir, "dev")
	if err != nil {
		t.Fatal(err)
	}
	other, err := testsuite.NewCerts(dir, "other")
	if err != nil {
		t.Fatal(err)
	}
	srv, c, _ := startConfig(t, mtlsConfig(t, dir, certs))
	ctx := ctxT(t)

	t.Run("client certificate", func(t *testing.T) {
		run, err := temporalclient.StartWorkflow(ctx, c, client.StartWorkflowOptions{ID: "ping-tls", TaskQueue: testQueue}, "Ping", "over mTLS")
		if err != nil {
			t.Fatal(err)
		}
		var out string
		if err := run.Get(ctx, &out); err != nil {
			t.Fatal(err)
		}
		if out != "pong: over mTLS" {
			t.Fatalf("Ping = %q", out)
		}
	})

	t.Run("schedule through the system worker", func(t *testing.T) {
		spec := temporalclient.ScheduleSpec{ID: "ping-tls-every", Every: time.Second, Workflow: "Ping", TaskQueue: testQueue, Args: []any{"scheduled"}}
		if err := temporalclient.EnsureSchedule(ctx, c, spec); err != nil {
			t.Fatal(err)
		}
		h := c.ScheduleClient().GetHandle(ctx, spec.ID)
		for {
			d, err := h.Describe(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Info.RecentActions) > 0 {
				a := d.Info.RecentActions[0].StartWorkflowResult
				var out string
				if err := c.GetWorkflow(ctx, a.WorkflowID, a.FirstExecutionRunID).Get(ctx, &out); err != nil {
					t.Fatal(err)
				}
				if out != "pong: scheduled" {
					t.Fatalf("scheduled Ping = %q", out)
				}
				break
			}
			if ctx.Err() != nil {
				t.Fatal("the schedule started no run: its system worker did not reach the TLS frontend")
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err := temporalclient.DeleteSchedule(ctx, c, spec.ID); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("UI reads through the TLS frontend", func(t *testing.T) {
		resp, err := http.Get(srv.UIURL() + "/api/v1/namespaces/default/workflows")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "ping-tls") {
			t.Fatalf("UI workflows: %s %.300s", resp.Status, body)
		}
	})

	for _, r := range []struct {
		name string
		conn temporalclient.Connection
	}{
		{"plaintext", temporalclient.Connection{}},
		{"TLS without a client certificate", temporalclient.Connection{TLS: temporalclient.TLSFiles{CAFile: certs.CA}}},
		{"client certificate of another CA", temporalclient.Connection{TLS: temporalclient.TLSFiles{CAFile: certs.CA,
			CertFile: other.ClientCert, KeyFile: other.ClientKey}}},
	} {
		t.Run("refused: "+r.name, func(t *testing.T) {
			r.conn.Addr = srv.FrontendAddr()
			c, err := r.conn.Dial(ctx, testLogger(t))
			if err == nil {
				defer c.Close()
				// A dial may succeed lazily: any call must fail.
				if _, err = c.ListWorkflow(ctx, nil); err == nil {
					t.Fatal("listed workflows")
				}
			}
			t.Logf("refused: %v", err)
		})
	}
}

// TestExposedAddressRefused: a frontend or UI address beyond loopback is
// refused without TLS, naming the address and the flags, before anything
// is created or bound; with TLS it passes the check.
func TestExposedAddressRefused(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ frontend, ui, named string }{
		{"0.0.0.0:7233", "", "frontend address 0.0.0.0:7233"},
		{"10.1.2.3:7233", "", "frontend address 10.1.2.3:7233"},
		{"[::]:7233", "", "frontend address [::]:7233"},
		{"127.0.0.1:0", "0.0.0.0:8233", "UI address 0.0.0.0:8233"},
	} {
		data := filepath.Join(dir, "data")
		_, err := StartServer(t.Context(), ServerConfig{DataDir: data, FrontendAddr: c.frontend, UIAddr: c.ui})
		if !errors.Is(err, ErrExposed) || !strings.Contains(err.Error(), c.named) || !strings.Contains(err.Error(), "--frontend-tls-client-ca") {
			t.Errorf("frontend %s UI %q: error %v, want ErrExposed naming %q and the flags", c.frontend, c.ui, err, c.named)
		}
		if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("frontend %s UI %q: the data folder was created before the refusal", c.frontend, c.ui)
		}
	}
	certs, err := testsuite.NewCerts(dir, "exposed")
	if err != nil {
		t.Fatal(err)
	}
	cfg := mtlsConfig(t, dir, certs)
	cfg.FrontendAddr, cfg.UIAddr = "0.0.0.0:7233", "0.0.0.0:8233"
	if err := cfg.Check(); err != nil {
		t.Errorf("with TLS: %v", err)
	}
	if s := cfg.UIScheme(); s != "https" {
		t.Errorf("UI beyond loopback with TLS served over %s", s)
	}
	cfg.TLS.Client.CertFile = ""
	if err := cfg.Check(); err == nil || !strings.Contains(err.Error(), "Client.CertFile (--temporal-tls-cert) missing") {
		t.Errorf("TLS without the server's own client certificate: %v", err)
	}
}

// TestUIProxyRequiresClientCert: the UI served beyond loopback (serveMTLS,
// here on loopback to be testable) answers a client with a certificate of
// the client CA and refuses one without.
func TestUIProxyRequiresClientCert(t *testing.T) {
	dir := t.TempDir()
	certs, err := testsuite.NewCerts(dir, "ui")
	if err != nil {
		t.Fatal(err)
	}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "the UI") }))
	defer backend.Close()
	ln := mustFreeAddr(t)
	cfg := mtlsConfig(t, dir, certs)
	proxy, err := serveMTLS(ln, backend.URL, cfg.TLS, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	tlsCfg, err := cfg.TLS.Client.Config()
	if err != nil {
		t.Fatal(err)
	}
	get := func(c *tls.Config) (string, error) {
		cl := &http.Client{Transport: &http.Transport{TLSClientConfig: c}}
		resp, err := cl.Get("https://" + ln + "/")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if body, err := get(tlsCfg); err != nil || body != "the UI" {
		t.Fatalf("with a client certificate: %q, %v", body, err)
	}
	noCert := tlsCfg.Clone()
	noCert.Certificates = nil
	if body, err := get(noCert); err == nil {
		t.Fatalf("without a client certificate the UI answered %q", body)
	}
}

func mustFreeAddr(t *testing.T) string {
	p, err := freePort(loopback)
	if err != nil {
		t.Fatal(err)
	}
	return joinHostPort(loopback, p)
}
