package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/sqlport"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/embedded"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
)

// devJob is a long-running part of "dbtrail dev" beside the Temporal server:
// it runs until ctx ends and then returns nil; an error it returns stops
// dev with that error.
type devJob struct {
	name string
	run  func(ctx context.Context) error
	// note is printed in dev's start block ("" for none).
	note string
}

func newDevCmd(g *globals) *cobra.Command {
	var (
		cfg         embedded.ServerConfig
		taskQueue   string
		wc          = newWorkerConfig()
		withCapture bool
		metricsAddr string
		sched       scheduleConfig
		sc          serveConfig
		early       earlyRefreshConfig
		ftls        embedded.FrontendTLS
		creds       temporalCreds
		sqlAddr     string
	)
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run everything in one process: an embedded Temporal server (SQLite) with its UI, and a worker",
		Long: `dev is the embedded default: an in-process Temporal server that keeps its
history in <data-dir>/temporal.db (it survives restarts), its web UI, and a
worker on the dbtrail task queue. It runs until Ctrl-C. Other processes
("dbtrail worker", one-shot verbs) can use its frontend address.
The frontend and the UI listen on loopback; another address is refused
unless the frontend requires client certificates: --frontend-tls-cert,
--frontend-tls-key and --frontend-tls-client-ca, with dev's own client
certificate in --temporal-tls-cert/--temporal-tls-key (docs/workflows.md,
"A production Temporal cluster").

Its HTTP API (--api-addr) needs a token: without --token-file or
` + tokensEnv + `, dev makes <data-dir>/` + api.DevTokenFile + ` (mode 0600, one
read-write token) on its first start, keeps it, and prints how to use it.
--no-auth serves the API without tokens (loopback only).`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			defer func() { closeTailCache(sc.tailCacheOf) }()
			cfg.Logger = g.log
			if err := devTLS(&cfg, ftls, creds); err != nil {
				return err
			}
			if err := cfg.Check(); err != nil {
				return err
			}
			if err := early.check(); err != nil {
				return err
			}
			acts, store, err := wc.activities(cmd, g)
			if err != nil {
				return err
			}
			defer store.Close()
			if err := devTighten(g, cfg.DataDir, sc, wc.backupDir); err != nil {
				return err
			}
			defer acts.Engines.Close()
			reg := prometheus.NewRegistry()
			reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
			if metricsAddr != "" {
				if err := serveMetrics(cmd.Context(), metricsAddr, reg, g.log); err != nil {
					return err
				}
			}
			var jobs []devJob
			verify := newVerifyCollector(wc.source)
			reg.MustRegister(verify)
			if withCapture {
				job, err := captureJob(cmd, g, wc, store, reg)
				if err != nil {
					return err
				}
				jobs = append(jobs, job)
			}
			specs, err := sched.specs(wc.source, taskQueue, g.fromArgs, g.log)
			if err != nil {
				return err
			}
			if sc.addr != "" {
				sc.source, sc.backupDir, sc.archiveURL = wc.source, wc.backupDir, wc.archiveURL
				note, err := sc.devTokens(cfg.DataDir, g.log)
				if err != nil {
					return err
				}
				jobs = append(jobs, devJob{name: "api", note: note, run: func(ctx context.Context) error {
					return runDevAPI(ctx, g, cfg, &sc, &sched.refresh, store)
				}})
			}
			if sqlAddr != "" && sc.tokenFile == "" && !cmd.Flags().Changed("sql-addr") {
				// The default port needs users: without a token file it stays off.
				g.log.Warn("the SQL port is off: its users are the tokens of a token file (--token-file, or dev's own with --api-addr); --sql-addr '' turns it off without this warning")
			} else if sqlAddr != "" {
				job, err := sqlDevJob(cmd.Context(), g, sqlAddr, &sc, wc.source, wc.backupDir, wc.archiveURL, store)
				if err != nil {
					return err
				}
				jobs = append(jobs, job)
			}
			watch := func(c client.Client, namespace string) (func(context.Context), error) {
				return early.watch(c, namespace, taskQueue, wc.source, sched.refresh.input(wc.source), acts, reg, g.log)
			}
			return runDev(cmd, cfg, taskQueue, acts, reg, specs, jobs, g.log, func(c client.Client, namespace string) {
				verify.useJobs(jobsService(c, namespace, taskQueue), wc.source)
			}, watch)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.DataDir, "data-dir", filepath.Join(".dbtrail", "dev"), "folder of the embedded server's SQLite database")
	f.StringVar(&cfg.FrontendAddr, "frontend-addr", embedded.DefaultFrontendAddr, "Temporal frontend (gRPC) listen address")
	f.StringVar(&cfg.UIAddr, "ui-addr", embedded.DefaultUIAddr, "Temporal web UI listen address (empty: no UI)")
	f.StringVar(&cfg.Namespace, "namespace", temporalclient.DefaultNamespace, "Temporal namespace (created if missing)")
	f.StringVar(&ftls.CertFile, "frontend-tls-cert", "", "serve the Temporal frontend over TLS with this certificate (PEM), requiring client certificates")
	f.StringVar(&ftls.KeyFile, "frontend-tls-key", "", "key (PEM) of --frontend-tls-cert")
	f.StringVar(&ftls.ClientCAFile, "frontend-tls-client-ca", "", "CA certificates (PEM) of the client certificates the frontend accepts")
	creds.registerTLS(f)
	f.StringVar(&taskQueue, "task-queue", payload.TaskQueue, "task queue of the worker")
	f.BoolVar(&withCapture, "capture", true, "also run capture of the source in this process")
	f.StringVar(&metricsAddr, "metrics-addr", "127.0.0.1:9464", "address of the Prometheus /metrics endpoint: capture's metrics, the last restore drill, the folders' free space (empty: off)")
	wc.register(f)
	sched.register(f)
	early.register(f)
	sc.register(f, api.DefaultAddr)
	f.StringVar(&sqlAddr, "sql-addr", sqlport.DefaultAddr, "listen address of the time-travel SQL port (MySQL protocol, read-only, loopback only; users from the API token file; '' turns it off)")
	return cmd
}

func runDev(cmd *cobra.Command, cfg embedded.ServerConfig, taskQueue string, acts *activities.Activities, reg prometheus.Registerer,
	schedules []temporalclient.ScheduleSpec, extra []devJob, log *slog.Logger, onClient func(client.Client, string),
	watch func(client.Client, string) (func(context.Context), error)) error {
	ctx := cmd.Context()
	began := time.Now()
	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	srv, err := embedded.StartServer(startCtx, cfg)
	cancel()
	if err != nil {
		return err
	}
	defer srv.Stop()
	log.Info("Temporal server started", slog.Duration("in", time.Since(began).Round(time.Millisecond)))
	c, err := srv.Connection().Dial(ctx, log)
	if err != nil {
		return err
	}
	defer c.Close()
	onClient(c, srv.Namespace())

	// EnsureSchedule leaves one of each schedule however often dev restarts.
	if err := ensureSchedules(cmd, c, srv.Namespace(), schedules, log); err != nil {
		return err
	}

	early, err := watch(c, srv.Namespace())
	if err != nil {
		return err
	}
	// Background jobs: capture joins the worker here.
	jobs := append([]devJob{
		{name: "worker", run: func(ctx context.Context) error { return runWorker(ctx, c, taskQueue, acts, reg, log, early) }},
	}, extra...)

	out := cmd.OutOrStdout()
	fmt.Fprintln(out, "dbtrail dev is running; Ctrl-C stops it.")
	if u := srv.UIURL(); u != "" {
		fmt.Fprintf(out, "  Temporal UI        %s/namespaces/%s/workflows\n", u, srv.Namespace())
	}
	fmt.Fprintf(out, "  Temporal frontend  %s  (namespace %s, task queue %s)\n", srv.FrontendAddr(), srv.Namespace(), taskQueue)
	fmt.Fprintf(out, "  history            %s\n", filepath.Join(cfg.DataDir, embedded.DBFile))
	fmt.Fprintf(out, "  backups            %s\n", acts.BackupDir)
	if acts.Remote != nil {
		fmt.Fprintf(out, "  remote snapshots   %s\n", acts.Remote.Location())
	}
	for _, j := range extra {
		fmt.Fprint(out, j.note)
	}
	return runJobs(ctx, jobs)
}

// devTLS sets cfg.TLS from dev's frontend TLS flags (ftls) and its own
// client's (creds): both or neither.
func devTLS(cfg *embedded.ServerConfig, ftls embedded.FrontendTLS, creds temporalCreds) error {
	if ftls == (embedded.FrontendTLS{}) {
		if creds.tls.Enabled() {
			return fmt.Errorf("--temporal-tls-* are dev's own client certificate for a TLS frontend: give --frontend-tls-cert, --frontend-tls-key and --frontend-tls-client-ca too")
		}
		return nil
	}
	ftls.Client = creds.tls
	cfg.TLS = &ftls
	return nil
}

// runJobs runs jobs until ctx ends (nil) or one fails (its error, after the
// others stopped). A job that ends early without error does not stop dev.
func runJobs(ctx context.Context, jobs []devJob) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, j := range jobs {
		g.Go(func() error {
			if err := j.run(gctx); err != nil {
				return fmt.Errorf("%s: %w", j.name, err)
			}
			return nil
		})
	}
	g.Go(func() error { <-gctx.Done(); return nil })
	return g.Wait()
}

// devTighten tightens dev's own folders beside the worker's (which
// wc.activities tightens): the embedded server's data folder and, with the
// API on, its export folder (beside backupDir unless --export-dir).
func devTighten(g *globals, dataDir string, sc serveConfig, backupDir string) error {
	folders := []folder{{"data", dataDir}}
	if sc.addr != "" {
		sc.backupDir = backupDir
		exports, err := sc.exports()
		if err != nil {
			return err
		}
		folders = append(folders, folder{"export", exports})
	}
	return tightenFolders(g.fileMode, g.log, folders...)
}
