package temporalclient

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/dbtrail/dbtrail/testsuite"
)

// frontendFake is a TLS gRPC server that answers GetSystemInfo (what a
// Dial calls) and records the Authorization header and the client
// certificate's name of each call. The real frontend with mTLS is tested
// with the embedded server (embedded.TestFrontendMTLS); this one shows the
// API key on the wire, which the embedded server does not check.
type frontendFake struct {
	workflowservice.UnimplementedWorkflowServiceServer
	mu      sync.Mutex
	auth    []string
	clients []string
}

func (f *frontendFake) GetSystemInfo(ctx context.Context, _ *workflowservice.GetSystemInfoRequest) (*workflowservice.GetSystemInfoResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	md, _ := metadata.FromIncomingContext(ctx)
	f.auth = append(f.auth, strings.Join(md.Get("authorization"), ","))
	if p, ok := peer.FromContext(ctx); ok {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(ti.State.PeerCertificates) > 0 {
			f.clients = append(f.clients, ti.State.PeerCertificates[0].Subject.CommonName)
		}
	}
	return &workflowservice.GetSystemInfoResponse{}, nil
}

// startFake serves a frontendFake over TLS with certs' server certificate,
// asking for (not requiring) a client certificate.
func startFake(t *testing.T, certs testsuite.Certs) (*frontendFake, string) {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(certs.ServerCert, certs.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	cas, err := LoadCAs(certs.CA)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert},
		ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: cas})))
	f := &frontendFake{}
	workflowservice.RegisterWorkflowServiceServer(srv, f)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return f, ln.Addr().String()
}

func TestConnectionSendsAPIKeyAndClientCert(t *testing.T) {
	dir := t.TempDir()
	certs, err := testsuite.NewCerts(dir, "fake")
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "api-key")
	if err := os.WriteFile(keyFile, []byte("s3cr3t-api-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, addr := startFake(t, certs)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn := Connection{Addr: addr, TLS: TLSFiles{CAFile: certs.CA, CertFile: certs.ClientCert, KeyFile: certs.ClientKey}, APIKeyFile: keyFile}
	c, err := conn.Dial(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.auth) == 0 || f.auth[0] != "Bearer s3cr3t-api-key" {
		t.Errorf("Authorization headers %q, want \"Bearer s3cr3t-api-key\"", f.auth)
	}
	if len(f.clients) == 0 || f.clients[0] != "fake client" {
		t.Errorf("client certificates %q, want \"fake client\"", f.clients)
	}

	// The frontend's certificate is checked: a client that trusts another
	// CA does not connect.
	other, err := testsuite.NewCerts(dir, "other")
	if err != nil {
		t.Fatal(err)
	}
	conn.TLS = TLSFiles{CAFile: other.CA}
	if c, err := conn.Dial(ctx, nil); err == nil {
		c.Close()
		t.Error("a client trusting another CA connected")
	}
}

func TestConnectionRefusesBadCredentials(t *testing.T) {
	dir := t.TempDir()
	certs, err := testsuite.NewCerts(dir, "bad")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	openKey := write("open-key.pem", "", 0o644)
	if b, err := os.ReadFile(certs.ClientKey); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(openKey, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		conn Connection
		want string
	}{
		{"API key file readable by others", Connection{APIKeyFile: write("open-api-key", "k\n", 0o644)}, "chmod 600"},
		{"empty API key file", Connection{APIKeyFile: write("empty-api-key", "\n\n", 0o600)}, "holds no key"},
		{"missing API key file", Connection{APIKeyFile: filepath.Join(dir, "nope")}, "API key file"},
		{"client key readable by others", Connection{TLS: TLSFiles{CertFile: certs.ClientCert, KeyFile: openKey}}, "open-key.pem: mode -rw-r--r--"},
		{"certificate without key", Connection{TLS: TLSFiles{CertFile: certs.ClientCert}}, "both its certificate file and its key file"},
		{"CA file without a certificate", Connection{TLS: TLSFiles{CAFile: write("ca.pem", "not a certificate", 0o644)}}, "holds no PEM certificate"},
		{"key of another certificate", Connection{TLS: TLSFiles{CertFile: certs.ServerCert, KeyFile: certs.ClientKey}}, "with key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.conn.Addr = "127.0.0.1:1"
			_, err := c.conn.Options(nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestConnectionOptionsPlaintextUnlessAsked(t *testing.T) {
	opts, err := Connection{Addr: "127.0.0.1:7233"}.Options(nil)
	if err != nil {
		t.Fatal(err)
	}
	if opts.ConnectionOptions.TLS != nil || opts.Credentials != nil || opts.Namespace != DefaultNamespace {
		t.Errorf("plain connection: TLS %v, credentials %v, namespace %q", opts.ConnectionOptions.TLS, opts.Credentials, opts.Namespace)
	}
	opts, err = Connection{Addr: "h:7233", Namespace: "prod", TLS: TLSFiles{ServerName: "temporal.example"}}.Options(nil)
	if err != nil {
		t.Fatal(err)
	}
	if opts.ConnectionOptions.TLS == nil || opts.ConnectionOptions.TLS.ServerName != "temporal.example" || opts.Namespace != "prod" {
		t.Errorf("TLS connection: TLS %+v, namespace %q", opts.ConnectionOptions.TLS, opts.Namespace)
	}
}
