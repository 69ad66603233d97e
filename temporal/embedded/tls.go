package embedded

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"go.temporal.io/server/common/config"

	"github.com/dbtrail/dbtrail/temporal/temporalclient"
)

// FrontendTLS serves the frontend (gRPC and its HTTP API) over TLS and
// requires every client to present a certificate signed by ClientCAFile's
// CA (mTLS). With it the frontend and the UI may listen beyond loopback.
type FrontendTLS struct {
	// CertFile and KeyFile are the frontend's certificate and key (PEM).
	CertFile, KeyFile string
	// ClientCAFile holds the CA certificates (PEM) of the client
	// certificates the frontend accepts.
	ClientCAFile string
	// Client is how the server's own clients (its readiness check, its
	// system worker that runs the schedules, its web UI) and dbtrail dev's
	// worker dial the frontend: a certificate signed by ClientCAFile's CA,
	// and the CA and name to check the frontend's certificate against.
	Client temporalclient.TLSFiles
}

// check refuses a FrontendTLS with a missing or unreadable file, naming it
// (the dev flags are named too, since dev is where it is set).
func (t *FrontendTLS) check() error {
	var missing []string
	for _, f := range []struct{ v, name string }{
		{t.CertFile, "CertFile (--frontend-tls-cert)"},
		{t.KeyFile, "KeyFile (--frontend-tls-key)"},
		{t.ClientCAFile, "ClientCAFile (--frontend-tls-client-ca)"},
		{t.Client.CertFile, "Client.CertFile (--temporal-tls-cert)"},
		{t.Client.KeyFile, "Client.KeyFile (--temporal-tls-key)"},
	} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("frontend TLS: %s missing (the frontend requires client certificates, its own clients included)", strings.Join(missing, ", "))
	}
	if _, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile); err != nil {
		return fmt.Errorf("frontend TLS: certificate %s with key %s: %w", t.CertFile, t.KeyFile, err)
	}
	if _, err := temporalclient.LoadCAs(t.ClientCAFile); err != nil {
		return fmt.Errorf("frontend TLS: client %w", err)
	}
	if _, err := t.Client.Config(); err != nil {
		return fmt.Errorf("frontend TLS: own client: %w", err)
	}
	return nil
}

// apply sets the server's TLS config: the frontend's listener requires
// client certificates; the system worker dials it with t.Client. The other
// services talk among themselves on loopback.
func (t *FrontendTLS) apply(conf *config.Config) {
	conf.Global.TLS.Frontend.Server = config.ServerTLS{
		CertFile:          t.CertFile,
		KeyFile:           t.KeyFile,
		ClientCAFiles:     []string{t.ClientCAFile},
		RequireClientAuth: true,
	}
	worker := config.WorkerTLS{
		CertFile: t.Client.CertFile,
		KeyFile:  t.Client.KeyFile,
		Client:   config.ClientTLS{ServerName: t.Client.ServerName},
	}
	if t.Client.CAFile != "" {
		worker.Client.RootCAFiles = []string{t.Client.CAFile}
	}
	conf.Global.TLS.SystemWorker = worker
}

// ErrExposed is matched (errors.Is) by the error of a frontend or UI
// address beyond loopback without FrontendTLS.
var ErrExposed = errors.New("listens beyond loopback without TLS")

// checkExposure refuses addr (the frontend's or the UI's, what says which)
// when it is not a loopback address and the frontend has no TLS: anyone
// who reaches it could start, read and cancel every workflow.
func checkExposure(what, addr, ip string, t *FrontendTLS) error {
	if isLoopback(ip) || t != nil {
		return nil
	}
	return fmt.Errorf("%s address %s %w: anyone who reaches it could start, read and cancel workflows; listen on 127.0.0.1, or require client certificates with --frontend-tls-cert, --frontend-tls-key and --frontend-tls-client-ca (ServerConfig.TLS)",
		what, addr, ErrExposed)
}

// Check refuses cfg when its frontend or UI would listen beyond loopback
// without TLS (ErrExposed), or its TLS is incomplete. It binds nothing;
// StartServer calls it first.
func (cfg ServerConfig) Check() error {
	if cfg.TLS != nil {
		if err := cfg.TLS.check(); err != nil {
			return err
		}
	}
	for _, a := range []struct{ what, addr string }{{"frontend", cfg.FrontendAddr}, {"UI", cfg.UIAddr}} {
		if a.addr == "" {
			continue
		}
		ip, _, err := parseAddr(a.addr, a.what)
		if err != nil {
			return err
		}
		if err := checkExposure(a.what, a.addr, ip, cfg.TLS); err != nil {
			return err
		}
	}
	return nil
}

// serveMTLS serves addr over TLS with t's frontend certificate, requires a
// client certificate signed by t.ClientCAFile's CA, and passes every
// request on to target (an http URL on loopback). It returns once it
// listens; Close stops it.
func serveMTLS(addr, target string, t *FrontendTLS, log *slog.Logger) (*http.Server, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("UI proxy: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("UI proxy: certificate %s: %w", t.CertFile, err)
	}
	cas, err := temporalclient.LoadCAs(t.ClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("UI proxy: client %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("UI address %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler: httputil.NewSingleHostReverseProxy(u),
		TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert},
			ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: cas},
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	go func() {
		if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
			log.Error("Temporal UI proxy stopped", "error", err)
		}
	}()
	return srv, nil
}

// UIScheme is the scheme the UI at cfg.UIAddr is served with: "https"
// beyond loopback (behind the mTLS proxy), else "http".
func (cfg ServerConfig) UIScheme() string {
	if ip, _, err := parseAddr(cfg.UIAddr, "UI"); err == nil && !isLoopback(ip) && cfg.TLS != nil {
		return "https"
	}
	return "http"
}
