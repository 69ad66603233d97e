package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/dbtrail/dbtrail/capture"
	"github.com/dbtrail/dbtrail/internal/index"
)

func newCaptureCmd(g *globals) *cobra.Command {
	var (
		cfg         capture.Config
		source      = dsnFlag{name: "source-dsn"}
		metricsAddr string
	)
	cmd := &cobra.Command{
		Use:   "capture",
		Short: "Read the source binlog into the index (long-running; one per source)",
		Long: `capture reads the source's binlog like a replica and writes every row change,
with its before and after image, into the index. It holds a lease in the index so
that only one capture runs per source; a second one waits and takes over when the
first dies. It refuses to start while a reindex of the source is
unfinished, naming it. Transient failures (lost connections) restart it with
backoff; a refused source, a schema mismatch or a capture gap stop it with the
reason.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dsn, err := source.resolve(g.fromArgs)
			if err != nil {
				return err
			}
			cfg.SourceDSN = dsn
			cfg.Logger = g.log
			reg := prometheus.NewRegistry()
			reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
			cfg.Metrics = capture.NewMetrics(reg)
			if metricsAddr != "" {
				if err := serveMetrics(cmd.Context(), metricsAddr, reg, g.log); err != nil {
					return err
				}
			}
			store, err := openIndex(cmd, g)
			if err != nil {
				return err
			}
			defer store.Close()
			if err := store.Init(cmd.Context()); err != nil {
				return fmt.Errorf("init index: %w", err)
			}
			reg.MustRegister(newDrillCollector(store, cfg.Source))
			return runCapture(cmd.Context(), cfg, store, g.log)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Source, "source", "main", "name of the captured source in the index")
	source.register(f, "source server")
	f.Uint32Var(&cfg.ServerID, "server-id", 0, "replica server id to register with (0: derived from --source)")
	f.StringVar(&cfg.Start, "start", "current", "where a source without checkpoint starts: current, earliest or file:pos")
	f.BoolVar(&cfg.ContinuePastGap, "continue-past-gap", false, "go on from the oldest binlog when the checkpoint's binlog was purged (the gap is recorded)")
	f.IntVar(&cfg.BatchRows, "batch-rows", 5000, "row events per index write")
	f.DurationVar(&cfg.FlushInterval, "flush-interval", 200*time.Millisecond, "longest time a committed change waits before it is written to the index")
	f.StringVar(&metricsAddr, "metrics-addr", "127.0.0.1:9464", "address of the Prometheus /metrics endpoint (empty: off)")
	return cmd
}

// runCapture restarts capture with backoff after transient failures and
// returns on permanent ones.
func runCapture(ctx context.Context, cfg capture.Config, store *index.Store, log *slog.Logger) error {
	backoff := time.Second
	for {
		start := time.Now()
		err := capture.Run(ctx, cfg, store)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil || capture.Permanent(err) {
			return err
		}
		if time.Since(start) > time.Minute {
			backoff = time.Second
		}
		log.Warn("capture stopped; restarting", slog.String("error", err.Error()), slog.Duration("in", backoff))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

func serveMetrics(ctx context.Context, addr string, reg *prometheus.Registry, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics listener on %s (choose another with --metrics-addr, or empty to turn it off): %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", slog.String("error", err.Error()))
		}
	}()
	log.Info("metrics served", slog.String("url", "http://"+ln.Addr().String()+"/metrics"))
	return nil
}

// captureJob is capture as a job of "dbtrail dev": the source and index of
// the worker configuration, restarted after transient failures; its
// metrics and the last drill's are registered on dev's registry.
func captureJob(cmd *cobra.Command, g *globals, wc *workerConfig, store *index.Store, reg *prometheus.Registry) (devJob, error) {
	dsn, err := wc.sourceDSN.resolve(g.fromArgs)
	if err != nil {
		return devJob{}, err
	}
	reg.MustRegister(newDrillCollector(store, wc.source))
	cfg := capture.Config{Source: wc.source, SourceDSN: dsn, Logger: g.log, Metrics: capture.NewMetrics(reg)}
	return devJob{name: "capture", run: func(ctx context.Context) error { return runCapture(ctx, cfg, store, g.log) }}, nil
}
