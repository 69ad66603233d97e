package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/catalog"
	"github.com/dbtrail/dbtrail/console"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/internal/tail"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/embedded"
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
	// queryMaxBytes bounds the rows of one API query's answer, encoded.
	queryMaxBytes int64
	// queryTailMaxEvents bounds the live tail of one API query.
	queryTailMaxEvents int64
	// queryTailCacheSize bounds the tail cache the API's queries and, in
	// dev, the SQL port share (tailCache; 0: none).
	queryTailCacheSize int64
	tailCacheMade      bool
	tailCacheOf        *tail.Cache
	// hosts are --api-host: other names the API is reached at.
	hosts []string
	// rate is --api-rate, requests per second per token or address.
	rate float64
	// noAuth is --no-auth: no tokens, on purpose (loopback only).
	noAuth bool
	// devTokenFile is dev's own token file, made on its first start and
	// used when neither --token-file nor DBTRAIL_API_TOKENS gives tokens
	// ("" for serve).
	devTokenFile string
	// slots bounds the queries answered at once (querySlots).
	slots *api.QuerySlots
}

func (s *serveConfig) register(f *pflag.FlagSet, addrDefault string) {
	f.StringVar(&s.addr, "api-addr", addrDefault, "listen address of the HTTP API (loopback unless --token-file or "+tokensEnv+" gives tokens)")
	f.StringVar(&s.tokenFile, "token-file", "", "file of API bearer tokens, one per line: \"ro SECRET [NAME]\" or \"rw SECRET [NAME]\" (mode 0600); or set "+tokensEnv)
	f.StringVar(&s.tlsCert, "tls-cert", "", "PEM certificate of the HTTP API (with --tls-key)")
	f.StringVar(&s.tlsKey, "tls-key", "", "PEM private key of the HTTP API (with --tls-cert)")
	f.StringVar(&s.exportDir, "export-dir", "", "folder, on the workers' machines, that API exports are written into (default <backup-dir>/../exports; \"none\" refuses exports)")
	f.StringVar(&s.queryMemoryLimit, "query-memory-limit", "512MB", "DuckDB memory limit of one API query")
	f.Int64Var(&s.queryMaxBytes, "query-max-bytes", api.DefaultQueryMaxBytes, "largest answer of one API query, its rows encoded as JSON, in bytes: a larger one is refused (413, naming this cap)")
	registerTailCache(f, &s.queryTailCacheSize, "query-tail-cache-size")
	f.Int64Var(&s.queryTailMaxEvents, "query-tail-max-events", tail.DefaultMaxEvents, "largest live tail one API query folds (with --index-dsn): with more changes after the snapshot the answer is the snapshot's, with the reason")
	f.StringArrayVar(&s.hosts, "api-host", nil, "another name the HTTP API is reached at, NAME or NAME:PORT (a reverse proxy's; repeatable): the Host header must name the listen address or one of these, an Origin header the API's own")
	f.Float64Var(&s.rate, "api-rate", api.DefaultRate, "requests per second each API token (without tokens, each client address) may send, bursts of twice that (0: no limit)")
	f.BoolVar(&s.noAuth, "no-auth", false, "serve the HTTP API without tokens on purpose (loopback only)")
}

// tokens reads the API's tokens: --token-file, else DBTRAIL_API_TOKENS,
// else dev's own token file (made on dev's first start), else none (with a
// warning unless --no-auth says so). created reports that dev's token file
// was made now.
func (s *serveConfig) tokens(log *slog.Logger) (toks []api.Token, created bool, err error) {
	env := os.Getenv(tokensEnv)
	switch {
	case s.noAuth && (s.tokenFile != "" || env != ""):
		return nil, false, fmt.Errorf("--no-auth serves the API without tokens: not with --token-file or %s", tokensEnv)
	case s.noAuth:
		if loop, err := api.IsLoopback(s.addr); err != nil || !loop {
			return nil, false, fmt.Errorf("--no-auth is for a loopback --api-addr only, not %s: give tokens (--token-file or %s)", s.addr, tokensEnv)
		}
		return nil, false, nil
	case s.tokenFile != "":
		toks, err = api.LoadTokens(s.tokenFile)
		return toks, false, err
	case env != "":
		toks, err = api.ParseTokens(env, tokensEnv)
		return toks, false, err
	case s.devTokenFile != "":
		toks, created, err = api.EnsureTokenFile(s.devTokenFile)
		s.tokenFile = s.devTokenFile
		return toks, created, err
	}
	log.Warn("the HTTP API has no tokens: every local user and process may start, cancel and read jobs; give --token-file (or " +
		tokensEnv + "), or --no-auth to mean it")
	return nil, false, nil
}

// job returns the API as a long-running job on c; store may be nil (no
// archives, no capture status). It listens at once, so a refused address
// or token file fails here.
func (s *serveConfig) job(g *globals, c client.Client, tf temporalFlags, rc *refreshConfig, store *index.Store) (devJob, error) {
	toks, _, err := s.tokens(g.log)
	if err != nil {
		return devJob{}, err
	}
	if s.queryTailMaxEvents < 1 {
		return devJob{}, fmt.Errorf("--query-tail-max-events %d: want at least 1", s.queryTailMaxEvents)
	}
	if _, err := s.tailCache(); err != nil {
		return devJob{}, err
	}
	if s.queryMaxBytes < 1 {
		return devJob{}, fmt.Errorf("--query-max-bytes %d: want at least 1", s.queryMaxBytes)
	}
	exportDir, err := s.exports()
	if err != nil {
		return devJob{}, err
	}
	backupDir, err := filepath.Abs(s.backupDir)
	if err != nil {
		return devJob{}, err
	}
	ln, err := api.Listen(api.ServeConfig{Addr: s.addr, TLSCert: s.tlsCert, TLSKey: s.tlsKey, Tokens: len(toks) > 0})
	if err != nil {
		return devJob{}, err
	}
	svc := jobs.New(jobs.Config{Client: c, Namespace: tf.namespace, TaskQueue: payload.TaskQueue, UI: tf.location().ui, Origin: jobs.StartedByAPI})
	cat := &catalog.Catalog{BackupDir: backupDir, Store: store, Archive: archiveOnce(s.archiveURL, g.log), Log: g.log}
	h, err := console.New(api.Config{
		Jobs:    svc,
		Catalog: cat,
		History: cat.History,
		Query:   catalog.SandboxQuery(s.sandbox(backupDir, store, g.log)),
		Tokens:  toks, Source: s.source, ExportDir: exportDir, Log: g.log,
		Refresh:          func(source string) payload.RefreshInput { return rc.input(source) },
		RetentionPreview: retentionPreview(svc),
		Addr:             ln.Addr().String(), Hosts: s.hosts, TLS: s.tlsCert != "", Rate: s.rate,
	})
	if err != nil {
		ln.Close()
		return devJob{}, err
	}
	g.log.Info("HTTP API listening", slog.String("url", s.scheme()+"://"+ln.Addr().String()+"/v1/"),
		slog.String("console", s.scheme()+"://"+ln.Addr().String()+"/"), slog.Int("tokens", len(toks)),
		slog.String("export_dir", exportDir))
	return devJob{name: "api", run: func(ctx context.Context) error {
		return api.Serve(ctx, ln, h)
	}}, nil
}

// scheme is the API's URL scheme: https with --tls-cert.
func (s *serveConfig) scheme() string {
	if s.tlsCert != "" {
		return "https"
	}
	return "http"
}

// devTokens sets dev's own token file (<dataDir>/api-tokens), makes it
// when it is to be used and missing, and returns the lines dev prints
// about the API: where it is, its tokens and a curl line that uses them.
func (s *serveConfig) devTokens(dataDir string, log *slog.Logger) (string, error) {
	path, err := filepath.Abs(filepath.Join(dataDir, api.DevTokenFile))
	if err != nil {
		return "", err
	}
	s.devTokenFile = path
	toks, created, err := s.tokens(log)
	if err != nil {
		return "", err
	}
	base := s.scheme() + "://" + s.addr + "/v1"
	var b strings.Builder
	switch {
	case len(toks) == 0:
		fmt.Fprintf(&b, "  HTTP API           %s/  (no tokens: --no-auth)\n", base)
		fmt.Fprintf(&b, "                     curl -s %s/jobs\n", base)
	case s.tokenFile == "":
		fmt.Fprintf(&b, "  HTTP API           %s/  (tokens from %s)\n", base, tokensEnv)
	default:
		made := ""
		if created {
			made = ", made now"
		}
		fmt.Fprintf(&b, "  HTTP API           %s/  (token file %s%s)\n", base, s.tokenFile, made)
		fmt.Fprintf(&b, "                     %s %s/jobs\n", api.Curl(s.tokenFile), base)
	}
	login := "log in with an API token"
	if len(toks) == 0 {
		login = "no login: no tokens"
	}
	fmt.Fprintf(&b, "  Console            %s://%s/  (%s)\n", s.scheme(), s.addr, login)
	return b.String(), nil
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
"rw SECRET [NAME]"; read-only tokens may only read. Without tokens on
loopback it serves with a warning (--no-auth: on purpose, no warning).
Every POST needs Content-Type: application/json; the Host header must name
the listen address (or an --api-host), an Origin header the API's own:
no web page can start a job. --tls-cert/--tls-key serve HTTPS. With --index-dsn it also answers archives and capture status;
the snapshots and POST /v1/query read --backup-dir (a worker's folder).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkNoRetentionFlags("serve", g.fromArgs); err != nil {
				return err
			}
			var store *index.Store
			if g.index.value != "" {
				var err error
				if store, err = openIndex(cmd, g); err != nil {
					return err
				}
				defer store.Close()
			}
			c, err := tf.dial(cmd.Context(), g.log)
			if err != nil {
				return err
			}
			defer c.Close()
			defer func() { closeTailCache(sc.tailCacheOf) }()
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
	refusedRetentionFlags(f)
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
		tf.ui = cfg.UIScheme() + "://" + cfg.UIAddr
	}
	if cfg.TLS != nil {
		tf.creds.tls = cfg.TLS.Client
	}
	c, err := tf.dial(ctx, g.log)
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

// archiveOnce opens the store of url at its first use and keeps it (a
// failed open is tried again at the next use); nil for "".
func archiveOnce(url string, log *slog.Logger) func(ctx context.Context) (storage.Store, error) {
	if url == "" {
		return nil
	}
	var mu sync.Mutex
	var open storage.Store
	return func(ctx context.Context) (storage.Store, error) {
		mu.Lock()
		defer mu.Unlock()
		if open != nil {
			return open, nil
		}
		s, err := openArchive(ctx, url, log)
		if err != nil {
			return nil, err
		}
		open = s
		return s, nil
	}
}

// sandbox is what the API's queries read: backupDir and, when store is
// not nil, the index for the live tail (bounded by --query-tail-max-events).
func (s *serveConfig) sandbox(backupDir string, store *index.Store, log *slog.Logger) catalog.Sandbox {
	sb := catalog.Sandbox{BackupDir: backupDir, MemoryLimit: s.queryMemoryLimit, MaxBytes: s.queryMaxBytes, MaxEvents: s.queryTailMaxEvents,
		Archive: archiveOnce(s.archiveURL, log), Slots: s.querySlots(), Log: log}
	if store != nil {
		sb.Index = store
		sb.TailCache = s.tailCacheOf
	}
	return sb
}

// tailCache is the tail cache of the API's queries and, in dev, the SQL
// port: made once (none with --query-tail-cache-size 0), its folder
// removed when the command ends (closeTailCache).
func (s *serveConfig) tailCache() (*tail.Cache, error) {
	if !s.tailCacheMade {
		if s.queryTailCacheSize < 0 {
			return nil, fmt.Errorf("--query-tail-cache-size %d: want 0 (no cache) or more", s.queryTailCacheSize)
		}
		cache, err := newTailCache("", s.queryTailCacheSize)
		if err != nil {
			return nil, err
		}
		s.tailCacheOf, s.tailCacheMade = cache, true
	}
	return s.tailCacheOf, nil
}

// querySlots is the bound of the queries answered at once, one for the API
// and, in dev, the SQL port (api.DefaultMaxQueries).
func (s *serveConfig) querySlots() *api.QuerySlots {
	if s.slots == nil {
		s.slots = api.NewQuerySlots(api.DefaultMaxQueries)
	}
	return s.slots
}
