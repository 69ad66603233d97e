package main

import (
	"context"
	"log/slog"

	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/temporal/embedded"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
)

// temporalCreds are the credentials flags of every command that dials
// Temporal (worker, serve, dev's own client, the CLI verbs): the client
// certificate and CAs of a TLS frontend and an API key file. Like every
// flag they can come from DBTRAIL_* variables (DBTRAIL_TEMPORAL_TLS_CERT, …).
type temporalCreds struct {
	tls        temporalclient.TLSFiles
	apiKeyFile string
}

// registerTLS registers the TLS flags.
func (c *temporalCreds) registerTLS(fs *pflag.FlagSet) {
	fs.StringVar(&c.tls.CertFile, "temporal-tls-cert", "", "client certificate (PEM) for a Temporal frontend that requires one (mTLS); with --temporal-tls-key")
	fs.StringVar(&c.tls.KeyFile, "temporal-tls-key", "", "key (PEM, mode 0600) of --temporal-tls-cert")
	fs.StringVar(&c.tls.CAFile, "temporal-tls-ca", "", "CA certificates (PEM) the Temporal frontend's certificate must chain to (default: the system's)")
	fs.StringVar(&c.tls.ServerName, "temporal-tls-server-name", "", "name to check on the Temporal frontend's certificate (default: the host of --temporal-addr)")
}

// register registers the TLS flags and the API key flag.
func (c *temporalCreds) register(fs *pflag.FlagSet) {
	c.registerTLS(fs)
	fs.StringVar(&c.apiKeyFile, "temporal-api-key-file", "", "file (mode 0600) holding a Temporal API key, sent as \"Authorization: Bearer\" over TLS")
}

// registerConn registers the flags that say how to reach Temporal:
// address, namespace and credentials.
func (f *temporalFlags) registerConn(fs *pflag.FlagSet) {
	fs.StringVar(&f.addr, "temporal-addr", embedded.DefaultFrontendAddr, "Temporal frontend host:port")
	fs.StringVar(&f.namespace, "namespace", temporalclient.DefaultNamespace, "Temporal namespace")
	f.creds.register(fs)
}

// conn is the connection f's flags describe.
func (f *temporalFlags) conn() temporalclient.Connection {
	return temporalclient.Connection{Addr: f.addr, Namespace: f.namespace, TLS: f.creds.tls, APIKeyFile: f.creds.apiKeyFile}
}

// dial connects to Temporal as f's flags say.
func (f *temporalFlags) dial(ctx context.Context, log *slog.Logger) (client.Client, error) {
	return f.conn().Dial(ctx, log)
}
