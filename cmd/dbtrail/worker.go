package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workers"
)

func newWorkerCmd(g *globals) *cobra.Command {
	var tf temporalFlags
	var taskQueue, metricsAddr string
	wc := newWorkerConfig()
	var sched scheduleConfig
	var early earlyRefreshConfig
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run dbtrail's workflows and activities against a Temporal server (long-running)",
		Long: `worker polls a Temporal task queue and runs dbtrail's workflows and activities.
Any Temporal works: the one inside "dbtrail dev", a self-hosted cluster or Temporal
Cloud. Run as many as you like, on as many machines: Temporal spreads the work.
A cluster with mTLS takes --temporal-tls-cert/--temporal-tls-key (and
--temporal-tls-ca), an API key --temporal-api-key-file (docs/workflows.md,
"A production Temporal cluster").
Give each worker its own --backup-dir and --work-dir and the same --archive-url:
a backup's steps run on one worker (a Temporal session) and snapshots are
shared through the store (docs/workflows.md, "Workers on several machines").`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := early.check(); err != nil {
				return err
			}
			acts, store, err := wc.activities(cmd, g)
			if err != nil {
				return err
			}
			defer store.Close()
			defer acts.Engines.Close()
			c, err := tf.dial(cmd.Context(), g.log)
			if err != nil {
				return err
			}
			defer c.Close()
			specs, err := sched.specs(wc.source, taskQueue, g.fromArgs, g.log)
			if err != nil {
				return err
			}
			if err := ensureSchedules(cmd, c, tf.namespace, specs, g.log); err != nil {
				return err
			}
			reg := prometheus.NewRegistry()
			if metricsAddr != "" {
				if err := serveMetrics(cmd.Context(), metricsAddr, reg, g.log); err != nil {
					return err
				}
			}
			watch, err := early.watch(c, tf.namespace, taskQueue, wc.source, sched.refresh.input(wc.source), acts, reg, g.log)
			if err != nil {
				return err
			}
			return runWorker(cmd.Context(), c, taskQueue, acts, reg, g.log, watch)
		},
	}
	f := cmd.Flags()
	tf.registerConn(f)
	f.StringVar(&taskQueue, "task-queue", payload.TaskQueue, "task queue to poll")
	f.StringVar(&metricsAddr, "metrics-addr", "", "address of a Prometheus /metrics endpoint with the folders' free space (empty: off; several workers on one machine need one each)")
	wc.register(f)
	sched.register(f)
	early.register(f)
	return cmd
}

// runWorker runs a worker with every dbtrail workflow and activity on
// taskQueue, sessions on (workers.Options), and one with the activities on
// its own queue (activities.WorkerQueue of its identity, where refreshes
// staged on other workers place tables), until ctx ends (nil) or the
// worker fails for good (its error). Meanwhile it watches the free space
// of its folders (workers.SpaceWatch), its gauge registered on reg, and
// runs each of watches (e.g. the early refresh: earlyRefreshConfig.watch)
// until it ends.
func runWorker(ctx context.Context, c client.Client, taskQueue string, acts *activities.Activities, reg prometheus.Registerer, log *slog.Logger,
	watches ...func(context.Context)) error {
	if acts.Identity == "" {
		acts.Identity = workers.Identity()
	}
	space, err := workers.NewSpaceWatch(reg, workers.SpaceFolders(acts), acts.Disk, log)
	if err != nil {
		return fmt.Errorf("free space metric: %w", err)
	}
	if acts.Index != nil {
		space.Recorder, space.Worker = acts.Index, acts.Identity
	}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go space.Run(wctx, workers.SpaceEvery)
	for _, watch := range watches {
		if watch != nil {
			go watch(wctx)
		}
	}
	fatal := make(chan error, 1)
	opts := workers.Options()
	opts.OnFatalError = func(err error) {
		select {
		case fatal <- err:
		default:
		}
	}
	if acts.Runs == nil {
		acts.Runs = temporalclient.Runs{Client: c}
	}
	if acts.Jobs == nil {
		acts.Jobs = temporalclient.Runs{Client: c}
	}
	for name := range acts.Sources {
		if err := snapshot.SweepStagings(ctx, filepath.Join(acts.BackupDir, name), "", acts.Runs, log.With(slog.String("source", name))); err != nil {
			log.Warn("staging folders not swept", slog.String("source", name), slog.String("error", err.Error()))
		}
	}
	if acts.Workers == nil {
		acts.Workers = temporalclient.Workers{Client: c}
	}
	opts.Identity = acts.Identity
	w := worker.New(c, taskQueue, opts)
	workers.RegisterAll(w, acts)
	if err := w.Start(); err != nil {
		return fmt.Errorf("start worker on task queue %s: %w", taskQueue, err)
	}
	defer w.Stop()
	own := worker.New(c, activities.WorkerQueue(taskQueue, acts.Identity), workers.OwnQueueOptions(opts))
	own.RegisterActivity(acts)
	if err := own.Start(); err != nil {
		return fmt.Errorf("start worker on its own task queue: %w", err)
	}
	defer own.Stop()
	log.Info("worker started", slog.String("task_queue", taskQueue))
	select {
	case <-ctx.Done():
		return nil
	case err := <-fatal:
		return fmt.Errorf("worker on task queue %s stopped: %w", taskQueue, err)
	}
}
