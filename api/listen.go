package api

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// DefaultAddr is where `dbtrail serve` listens: loopback only.
const DefaultAddr = "127.0.0.1:8280"

// ServeConfig is where and how the API listens.
type ServeConfig struct {
	Addr string
	// TLSCert and TLSKey are PEM files; both or neither.
	TLSCert, TLSKey string
	// Tokens says whether the handler checks bearer tokens: without, only
	// a loopback address is accepted.
	Tokens bool
}

// IsLoopback reports whether the host of addr (host:port) is a loopback
// address or "localhost"; an empty host (every address) is not.
func IsLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}

// Listen opens cfg.Addr after the checks: a non-loopback address needs
// tokens, TLS needs both files (loaded here, so a bad pair fails now).
func Listen(cfg ServeConfig) (net.Listener, error) {
	loop, err := IsLoopback(cfg.Addr)
	if err != nil {
		return nil, err
	}
	if !loop && !cfg.Tokens {
		return nil, fmt.Errorf("listen address %s is not loopback: dbtrail serve refuses to listen beyond this machine without tokens (--token-file or DBTRAIL_API_TOKENS)", cfg.Addr)
	}
	tc, err := LoadTLS(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	if tc == nil {
		return ln, nil
	}
	return tls.NewListener(ln, tc), nil
}

// LoadTLS loads the server certificate certFile and its key keyFile (PEM;
// both or neither: nil for neither) into a TLS configuration of TLS 1.2
// and later: the API's --tls-cert/--tls-key and the SQL port's.
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	if certFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// Serve answers h on ln until ctx ends, then shuts down gracefully (at
// most 10 s for requests in flight) and returns nil; a server failure is
// its error.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("api server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("api server shutdown: %w", err)
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
