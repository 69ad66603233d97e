package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/tail"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/temporal/embedded"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// tokensEnv holds API tokens in the token file's syntax, for deployments
// that pass secrets through the environment.
const tokensEnv = "DBTRAIL_API_TOKENS"

// serveConfig is the flags of the HTTP API, shared by `dbtrail serve` and
// `dbtrail dev`.
type serveConfig struct {
	addr, tokenFile  string
	tlsCert, tlsKey  string
	exportDir        string
	backupDir        string
	archiveURL       string
	source           string
	queryMemoryLimit string
	// queryTailMaxEvents bounds the live tail of one API query.
	queryTailMaxEvents int64
}

func (s *serveConfig) register(f *pflag.FlagSet, addrDefault string) {
	f.StringVar(&s.addr, "api-addr", addrDefault, "listen address of the HTTP API (loopback unless --token-file or "+tokensEnv+" gives tokens)")
	f.StringVar(&s.tokenFile, "token-file", "", "file of API bearer tokens, one per line: \"ro SECRET [NAME]\" or \"rw SECRET [NAME]\" (mode 0600); or set "+tokensEnv)
	f.StringVar(&s.tlsCert, "tls-cert", "", "PEM certificate of the HTTP API (with --tls-key)")
	f.StringVar(&s.tlsKey, "tls-key", "", "PEM private key of the HTTP API (with --tls-cert)")
	f.StringVar(&s.exportDir, "export-dir", "", "folder, on the workers' machines, that API exports are written into (default <backup-dir>/../exports; \"none\" refuses exports)")
	f.StringVar(&s.queryMemoryLimit, "query-memory-limit", "512MB", "DuckDB memory limit of one API query")
	f.Int64Var(&s.queryTailMaxEvents, "query-tail-max-events", tail.DefaultMaxEvents, "largest live tail one API query folds (with --index-dsn): with more changes after the snapshot the answer is the snapshot's, with the reason")
}

// tokens reads the API's tokens: --token-file, else DBTRAIL_API_TOKENS,
// else none.
func (s *serveConfig) tokens() ([]api.Token, error) {
	if s.tokenFile != "" {
		return api.LoadTokens(s.tokenFile)
	}
	if v := os.Getenv(tokensEnv); v != "" {
		return api.ParseTokens(v, tokensEnv)
	}
	return nil, nil
}

// job returns the API as a long-running job on c; store may be nil (no
// archives, no capture status). It listens at once, so a refused address
// or token file fails here.
func (s *serveConfig) job(g *globals, c client.Client, tf temporalFlags, rc *refreshConfig, store *index.Store) (devJob, error) {
	toks, err := s.tokens()
	if err != nil {
		return devJob{}, err
	}
	if s.queryTailMaxEvents < 1 {
		return devJob{}, fmt.Errorf("--query-tail-max-events %d: want at least 1", s.queryTailMaxEvents)
	}
	exportDir, err := s.exports()
	if err != nil {
		return devJob{}, err
	}
	backupDir, err := filepath.Abs(s.backupDir)
	if err != nil {
		return devJob{}, err
	}
	svc := jobs.New(jobs.Config{Client: c, Namespace: tf.namespace, TaskQueue: workflows.TaskQueue, UI: tf.location().ui, Origin: jobs.StartedByAPI})
	h, err := api.New(api.Config{
		Jobs:    svc,
		Catalog: &catalog{backupDir: backupDir, archiveURL: s.archiveURL, store: store, log: g.log},
		Query:   sandboxQuery(s.sandbox(backupDir, store, g.log)),
		Tokens:  toks, Source: s.source, ExportDir: exportDir, Log: g.log,
		Refresh:          func(source string) workflows.RefreshInput { return rc.input(source) },
		RetentionPreview: retentionPreview(svc),
	})
	if err != nil {
		return devJob{}, err
	}
	ln, err := api.Listen(api.ServeConfig{Addr: s.addr, TLSCert: s.tlsCert, TLSKey: s.tlsKey, Tokens: len(toks) > 0})
	if err != nil {
		return devJob{}, err
	}
	scheme := "http"
	if s.tlsCert != "" {
		scheme = "https"
	}
	g.log.Info("HTTP API listening", slog.String("url", scheme+"://"+ln.Addr().String()+"/v1/"), slog.Int("tokens", len(toks)),
		slog.String("export_dir", exportDir))
	return devJob{name: "api", run: func(ctx context.Context) error { return api.Serve(ctx, ln, h) }}, nil
}

// exports is the export folder: --export-dir, else exports/ beside the
// backup folder, "" for none.
func (s *serveConfig) exports() (string, error) {
	switch s.exportDir {
	case "none":
		return "", nil
	case "":
		return filepath.Abs(filepath.Join(filepath.Dir(filepath.Clean(s.backupDir)), "exports"))
	}
	return filepath.Abs(s.exportDir)
}

func newServeCmd(g *globals) *cobra.Command {
	var (
		sc serveConfig
		tf temporalFlags
		rc refreshConfig
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP JSON API: start, list, follow and cancel jobs; snapshots, archives, status, a sandboxed query",
		Long: `serve answers the HTTP API of docs/api.md, a thin layer over Temporal: every
POST /v1/backups, /v1/refreshes, /v1/exports, /v1/verifies or /v1/restores
starts a workflow (its id is the job id, <source>:<label>) and answers 202.
Labels are unique per source, one job per source and kind runs at a time
(409 with the existing job's id otherwise). The OpenAPI document is at
/v1/openapi.json.

It listens on loopback by default and refuses any other address without
tokens (--token-file or ` + tokensEnv + `): each line "ro SECRET [NAME]" or
"rw SECRET [NAME]"; read-only tokens may only read. --tls-cert/--tls-key
serve HTTPS. With --index-dsn it also answers archives and capture status;
the snapshots and POST /v1/query read --backup-dir (a worker's folder).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var store *index.Store
			if g.index.value != "" {
				var err error
				if store, err = openIndex(cmd, g); err != nil {
					return err
				}
				defer store.Close()
			}
			c, err := temporalclient.Dial(cmd.Context(), tf.addr, tf.namespace, g.log)
			if err != nil {
				return err
			}
			defer c.Close()
			job, err := sc.job(g, c, tf, &rc, store)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "dbtrail serve is running on %s; Ctrl-C stops it.\n", sc.addr)
			return job.run(cmd.Context())
		},
	}
	f := cmd.Flags()
	sc.register(f, api.DefaultAddr)
	tf.register(f)
	rc.register(f)
	f.StringVar(&sc.source, "source", "main", "source of a request that names none")
	f.StringVar(&sc.backupDir, "backup-dir", filepath.Join(".dbtrail", "backups"), "backup folder read by /v1/snapshots and /v1/query")
	registerArchiveURL(f, &sc.archiveURL, "object storage of the snapshots, for /v1/snapshots to say which are remote")
	return cmd
}

// runDevAPI is dev's HTTP API: it dials dev's own frontend (up by the time
// the jobs run) and serves until ctx ends. An address in use (another dev
// on this machine) only warns: dev goes on without its API.
func runDevAPI(ctx context.Context, g *globals, cfg embedded.ServerConfig, sc *serveConfig, rc *refreshConfig, store *index.Store) error {
	tf := temporalFlags{addr: cfg.FrontendAddr, namespace: cfg.Namespace}
	if cfg.UIAddr != "" {
		tf.ui = "http://" + cfg.UIAddr
	}
	c, err := temporalclient.Dial(ctx, tf.addr, tf.namespace, g.log)
	if err != nil {
		return err
	}
	defer c.Close()
	job, err := sc.job(g, c, tf, rc, store)
	if errors.Is(err, syscall.EADDRINUSE) {
		g.log.Warn("HTTP API not started: its address is in use (--api-addr)", slog.String("addr", sc.addr), slog.String("error", err.Error()))
		return nil
	}
	if err != nil {
		return err
	}
	return job.run(ctx)
}
