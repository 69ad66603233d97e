package temporalclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/internal/filemode"
)

// Connection is how a dbtrail process reaches a Temporal frontend: its
// address and namespace, and the credentials a production cluster asks
// for (a client certificate for mTLS, an API key). Every dbtrail process
// that dials Temporal (worker, dev, serve, the CLI verbs) builds its
// client options here (Options), so they all connect alike.
type Connection struct {
	Addr      string // host:port of the frontend
	Namespace string // "" means DefaultNamespace
	TLS       TLSFiles
	// APIKeyFile holds an API key (Temporal Cloud, or a cluster whose
	// authorizer reads "Authorization: Bearer <key>"); "" sends none. The
	// file must not be readable by group or others. An API key always
	// travels over TLS.
	APIKeyFile string
}

// TLSFiles are the PEM files of a TLS connection to the frontend. TLS is
// used when any of them is set (or an API key is). The files are read when
// the client options are built: a renewed certificate takes a restart.
type TLSFiles struct {
	// CertFile and KeyFile are the client certificate and its key, for a
	// frontend that requires client certificates (mTLS). Both or neither.
	// The key file must not be readable by group or others.
	CertFile, KeyFile string
	// CAFile holds the CA certificates the frontend's certificate must chain
	// to; "" trusts the system's CAs.
	CAFile string
	// ServerName is the name checked on the frontend's certificate; ""
	// checks the host of the address.
	ServerName string
}

// Enabled reports whether any TLS setting is given.
func (t TLSFiles) Enabled() bool {
	return t.CertFile != "" || t.KeyFile != "" || t.CAFile != "" || t.ServerName != ""
}

// Config builds the tls.Config of t: TLS 1.2 or later, the client
// certificate when given, the frontend's certificate checked against
// CAFile (or the system's CAs) and ServerName. Errors name the file.
func (t TLSFiles) Config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	switch {
	case t.CertFile != "" && t.KeyFile != "":
		if err := filemode.CheckPrivate(t.KeyFile, "TLS key file"); err != nil {
			return nil, err
		}
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("client certificate %s with key %s: %w", t.CertFile, t.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	case t.CertFile != "" || t.KeyFile != "":
		return nil, errors.New("a client certificate needs both its certificate file and its key file")
	}
	if t.CAFile != "" {
		pool, err := LoadCAs(t.CAFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// LoadCAs reads the PEM certificates of path into a pool; a file without
// any certificate is refused.
func LoadCAs(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("CA file %s holds no PEM certificate", path)
	}
	return pool, nil
}

// Options are the SDK client options of c: address, namespace, the SDK's
// messages on log (slog.Default() when nil), TLS when c.TLS is enabled or
// an API key is given, and the API key as the SDK's API key credentials
// ("Authorization: Bearer <key>" on every call).
func (c Connection) Options(log *slog.Logger) (client.Options, error) {
	opts := client.Options{HostPort: c.Addr, Namespace: c.namespace(), Logger: sdkLogger(log)}
	if c.TLS.Enabled() || c.APIKeyFile != "" {
		cfg, err := c.TLS.Config()
		if err != nil {
			return client.Options{}, fmt.Errorf("Temporal TLS: %w", err)
		}
		opts.ConnectionOptions.TLS = cfg
	}
	if c.APIKeyFile != "" {
		key, err := readAPIKey(c.APIKeyFile)
		if err != nil {
			return client.Options{}, err
		}
		opts.Credentials = client.NewAPIKeyStaticCredentials(key)
	}
	return opts, nil
}

// Dial connects to the frontend as c says and checks the connection
// before returning. The caller closes the client.
func (c Connection) Dial(ctx context.Context, log *slog.Logger) (client.Client, error) {
	opts, err := c.Options(log)
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s: %w", c.Addr, err)
	}
	cl, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s (namespace %s%s): %w", c.Addr, opts.Namespace, c.describe(), err)
	}
	return cl, nil
}

func (c Connection) namespace() string {
	if c.Namespace == "" {
		return DefaultNamespace
	}
	return c.Namespace
}

// describe says how c authenticates, for errors: ", TLS, client
// certificate, API key" or "" for plaintext.
func (c Connection) describe() string {
	var s []string
	if c.TLS.Enabled() || c.APIKeyFile != "" {
		s = append(s, "TLS")
	}
	if c.TLS.CertFile != "" {
		s = append(s, "client certificate "+c.TLS.CertFile)
	}
	if c.APIKeyFile != "" {
		s = append(s, "API key from "+c.APIKeyFile)
	}
	if len(s) == 0 {
		return ""
	}
	return ", " + strings.Join(s, ", ")
}

// readAPIKey reads the API key of path: its first line, trimmed; a file
// readable by others or without a key is refused.
func readAPIKey(path string) (string, error) {
	if err := filemode.CheckPrivate(path, "API key file"); err != nil {
		return "", err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("API key file: %w", err)
	}
	key, _, _ := strings.Cut(string(b), "\n")
	key = strings.TrimSpace(key)
	if key == "" {
		return "", fmt.Errorf("API key file %s holds no key", path)
	}
	return key, nil
}
