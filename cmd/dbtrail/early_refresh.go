package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/workers"
)

// earlyRefreshConfig is --early-refresh-events and --early-refresh-check of
// worker and dev: the bound of the live tail past which the worker starts
// the source's refresh before its schedule (docs/tail.md, "Bounds").
type earlyRefreshConfig struct {
	events int64
	every  time.Duration
}

func (e *earlyRefreshConfig) register(f *pflag.FlagSet) {
	f.Int64Var(&e.events, "early-refresh-events", workers.DefaultEarlyRefreshEvents,
		"start the next refresh at once when more events than this were captured after the current snapshot (the live tail's size; 0: off)")
	f.DurationVar(&e.every, "early-refresh-check", workers.DefaultEarlyRefreshCheck, "how often the worker measures the live tail for --early-refresh-events")
}

// early is the early-refresh watch of source for a worker with acts, or
// nil when --early-refresh-events is 0. It starts refreshes with input
// through the jobs service of c.
func (e *earlyRefreshConfig) watch(c client.Client, namespace, taskQueue, source string, input payload.RefreshInput,
	acts *activities.Activities, reg prometheus.Registerer, log *slog.Logger) (run func(context.Context), err error) {
	if err := e.check(); err != nil || e.events == 0 {
		return nil, err
	}
	w, err := workers.NewEarlyRefresh(reg, workers.EarlyRefreshConfig{Source: source, SourceDir: filepath.Join(acts.BackupDir, source),
		Index: acts.Index, Jobs: jobsService(c, namespace, taskQueue), Input: input, MaxEvents: e.events, Log: log})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) { w.Run(ctx, e.every) }, nil
}

// check refuses a negative bound and, with the watch on, a check interval
// under a second.
func (e *earlyRefreshConfig) check() error {
	switch {
	case e.events < 0:
		return fmt.Errorf("--early-refresh-events %d: want 0 (off) or a number of events", e.events)
	case e.events > 0 && e.every < time.Second:
		return fmt.Errorf("--early-refresh-check %s: the shortest interval is 1s", e.every)
	}
	return nil
}
