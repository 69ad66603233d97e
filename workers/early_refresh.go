package workers

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
)

// DefaultEarlyRefreshEvents is the tail size (events captured after the
// current snapshot) past which a worker starts the next refresh early: half
// of the query tail's own bound (tail.DefaultMaxEvents), so a query reads
// the snapshot alone for its size only when refreshes cannot keep up.
const DefaultEarlyRefreshEvents = 1_000_000

// DefaultEarlyRefreshCheck is how often a worker measures the tail.
const DefaultEarlyRefreshCheck = 10 * time.Second

// TailIndex is what EarlyRefresh reads of the index (*index.Store).
type TailIndex interface {
	LoadCheckpoint(ctx context.Context, source string) (change.Checkpoint, bool, error)
	ChangeCounts(ctx context.Context, source string, afterSeq, uptoSeq uint64) (map[[2]string]int64, error)
}

// JobStarter starts jobs with the one-refresh-per-source rule
// (*jobs.Service: a *jobs.ConflictError when a refresh of the source is
// running or the label is taken).
type JobStarter interface {
	Start(ctx context.Context, req jobs.Request) (jobs.Job, error)
}

// Outcome is what one EarlyRefresh.Check did.
type Outcome string

// The outcomes of a check.
const (
	// OutcomeBelow: the tail is within the bound; nothing started.
	OutcomeBelow Outcome = "below"
	// OutcomeStarted: the tail is past the bound and a refresh was started.
	OutcomeStarted Outcome = "started"
	// OutcomeRunning: past the bound, but a refresh of the source is
	// running (scheduled, early or by a user): it is not joined or doubled.
	OutcomeRunning Outcome = "running"
	// OutcomeAlready: past the bound, but the early refresh of this
	// snapshot was started before (by this worker or another): one early
	// refresh per snapshot, the schedule runs the next ones.
	OutcomeAlready Outcome = "already"
	// OutcomeNoSnapshot: no current snapshot or no checkpoint yet.
	OutcomeNoSnapshot Outcome = "no-snapshot"
)

// EarlyRefresh bounds the live tail of one source: each Check counts the
// events captured after the current snapshot (the snapshot in SourceDir,
// up to capture's checkpoint) and, past MaxEvents, starts the source's
// Refresh at once instead of waiting for its schedule. The start goes
// through Jobs (the path of `dbtrail refresh`: one refresh of a source at a
// time, WorkflowExecutionErrorWhenAlreadyStarted) under the label
// EarlyLabel(snapshot), so however many workers watch the source, at most
// one early refresh per snapshot ever starts, and a running refresh is
// never joined or duplicated. Gauge dbtrail_tail_events{source} holds the
// last count, counter dbtrail_early_refreshes_total{source, reason} the
// refreshes started and dbtrail_early_refresh_checks_total{source,
// outcome} the checks by Outcome ("error" for a failed one): many
// "running" means refreshes do not keep up with the traffic.
type EarlyRefresh struct {
	source    string
	sourceDir string
	index     TailIndex
	jobs      JobStarter
	input     payload.RefreshInput
	maxEvents int64
	log       *slog.Logger
	events    prometheus.Gauge
	started   prometheus.Counter
	checks    *prometheus.CounterVec
}

// EarlyRefreshConfig configures an EarlyRefresh.
type EarlyRefreshConfig struct {
	// Source and SourceDir (<backup-dir>/<source>) name the source and the
	// folder whose current snapshot the tail starts after.
	Source    string
	SourceDir string
	Index     TailIndex
	Jobs      JobStarter
	// Input is the Refresh's argument (the schedule's); Input.Source is set
	// to Source.
	Input payload.RefreshInput
	// MaxEvents is the bound; at least 1.
	MaxEvents int64
	Log       *slog.Logger
}

// ReasonTailSize is the reason label of a refresh started for the tail's size.
const ReasonTailSize = "tail_size"

// NewEarlyRefresh returns the watch of cfg, its metrics registered on reg
// (none when nil).
func NewEarlyRefresh(reg prometheus.Registerer, cfg EarlyRefreshConfig) (*EarlyRefresh, error) {
	if cfg.Source == "" || cfg.SourceDir == "" || cfg.Index == nil || cfg.Jobs == nil {
		return nil, errors.New("early refresh: Source, SourceDir, Index and Jobs are required")
	}
	if cfg.MaxEvents < 1 {
		return nil, fmt.Errorf("early refresh of %s: bound %d: want at least 1 event", cfg.Source, cfg.MaxEvents)
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	cfg.Input.Source = cfg.Source
	labels := prometheus.Labels{"source": cfg.Source}
	w := &EarlyRefresh{source: cfg.Source, sourceDir: cfg.SourceDir, index: cfg.Index, jobs: cfg.Jobs, input: cfg.Input,
		maxEvents: cfg.MaxEvents, log: cfg.Log,
		events: prometheus.NewGauge(prometheus.GaugeOpts{Name: "dbtrail_tail_events", ConstLabels: labels,
			Help: "Events captured after the current snapshot (the live tail a query folds), at the last check."}),
		started: prometheus.NewCounter(prometheus.CounterOpts{Name: "dbtrail_early_refreshes_total",
			ConstLabels: prometheus.Labels{"source": cfg.Source, "reason": ReasonTailSize},
			Help:        "Refreshes this worker started before their schedule, by reason (tail_size: the tail passed --early-refresh-events)."}),
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "dbtrail_early_refresh_checks_total", ConstLabels: labels,
			Help: "Measures of the live tail by outcome: below, started, running (past the bound while a refresh runs), already, no-snapshot, error."},
			[]string{"outcome"}),
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{w.events, w.started, w.checks} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return w, nil
}

// EarlyLabel is the job label of the early refresh after snapshot id.
func EarlyLabel(id string) string { return "early-" + id }

// Check measures the tail once and starts the refresh when it is past the
// bound. It returns what it did and the tail's size; an error is a failed
// read of the index, the snapshot or a failed start.
func (w *EarlyRefresh) Check(ctx context.Context) (Outcome, int64, error) {
	out, n, err := w.check(ctx)
	if err != nil {
		w.checks.WithLabelValues("error").Inc()
	} else {
		w.checks.WithLabelValues(string(out)).Inc()
	}
	return out, n, err
}

func (w *EarlyRefresh) check(ctx context.Context) (Outcome, int64, error) {
	snap, err := snapshot.OpenCurrent(w.sourceDir)
	if errors.Is(err, fs.ErrNotExist) {
		return OutcomeNoSnapshot, 0, nil
	}
	if err != nil {
		return "", 0, fmt.Errorf("early refresh of %s: %w", w.source, err)
	}
	cp, ok, err := w.index.LoadCheckpoint(ctx, w.source)
	if err != nil {
		return "", 0, fmt.Errorf("early refresh of %s: checkpoint: %w", w.source, err)
	}
	if !ok {
		return OutcomeNoSnapshot, 0, nil
	}
	id, from := snap.Manifest.SnapshotID, snap.Manifest.Position.Seq
	n, err := w.count(ctx, from, cp.LastSeq)
	if err != nil {
		return "", 0, err
	}
	w.events.Set(float64(n))
	if n <= w.maxEvents {
		return OutcomeBelow, n, nil
	}
	job, err := w.jobs.Start(ctx, jobs.Request{Kind: jobs.Refresh, Source: w.source, Label: EarlyLabel(id), Input: w.input})
	var conflict *jobs.ConflictError
	switch {
	case errors.As(err, &conflict) && conflict.Reason == jobs.ConflictRunning:
		w.log.Debug("tail past its bound; a refresh is running", slog.String("source", w.source),
			slog.Int64("events", n), slog.String("job", conflict.JobID))
		return OutcomeRunning, n, nil
	case errors.As(err, &conflict) && conflict.Reason == jobs.ConflictLabel:
		return OutcomeAlready, n, nil
	case err != nil:
		return "", n, fmt.Errorf("early refresh of %s: %w", w.source, err)
	}
	w.started.Inc()
	w.log.Info("refresh started early: the tail passed its bound", slog.String("source", w.source),
		slog.String("reason", ReasonTailSize), slog.String("snapshot", id), slog.Int64("events", n),
		slog.Int64("bound", w.maxEvents), slog.Uint64("after_seq", from), slog.Uint64("upto_seq", cp.LastSeq),
		slog.String("job", job.ID))
	return OutcomeStarted, n, nil
}

// count is the number of the source's events in the index with seq in
// (after, upto] (the current snapshot is minutes old: the index holds its
// tail whole).
func (w *EarlyRefresh) count(ctx context.Context, after, upto uint64) (int64, error) {
	if upto <= after {
		return 0, nil
	}
	counts, err := w.index.ChangeCounts(ctx, w.source, after, upto)
	if err != nil {
		return 0, fmt.Errorf("early refresh of %s: %w", w.source, err)
	}
	var n int64
	for _, c := range counts {
		n += c
	}
	return n, nil
}

// Run checks every interval until ctx ends; a failed check is logged
// (once per run of failures) and retried at the next tick.
func (w *EarlyRefresh) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	failing := false
	for {
		_, _, err := w.Check(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			w.log.Warn("early refresh check failed", slog.String("source", w.source), slog.String("error", err.Error()))
			failing = true
		case err == nil && failing:
			w.log.Info("early refresh check works again", slog.String("source", w.source))
			failing = false
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
