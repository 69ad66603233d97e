package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"golang.org/x/sync/errgroup"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/capture"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/embedded"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workers"
	"github.com/dbtrail/dbtrail/workflows"
)

// The freshness benchmark's settings.
const (
	freshSource       = "main"
	freshMarkerEvery  = 2 * time.Second  // a marker row committed this often
	freshRefreshEvery = 60 * time.Second // a Refresh started this often, as the schedule would
)

// freshEnv is the freshness benchmark's servers: the source with the
// interleaved workload's tpcc database, the index with capture running
// into it, an embedded Temporal server and a worker in this process, and
// the dbtrail binary the queries run.
type freshEnv struct {
	src, idx *testsuite.Server
	store    *index.Store
	srv      *embedded.Server
	c        client.Client
	w        worker.Worker
	acts     *activities.Activities
	bin, dir string
	undo     []func()
	writers  []*oltpWriter // the workload's, one per connection
}

// close stops whatever e started and removes its folder.
func (e *freshEnv) close() {
	for i := len(e.undo) - 1; i >= 0; i-- {
		e.undo[i]()
	}
}

// benchFreshness measures how soon a committed row is visible through
// `dbtrail query` (the binary, one process per query, as a user polling
// runs it) under the interleaved OLTP workload paced at rate transactions a
// second for seconds, with a Refresh every minute: a marker row is
// committed every 2 s and two pollers query for it back to back
// (freshPollers: the marker table with the live tail; and in turn the
// marker table with --tail=false and a query naming every table with the
// tail). It reports the commit-to-visible p50
// and max of each, the workload's achieved rate and the CPU the tail
// costs: a tail query's CPU above a snapshot-only query's.
func benchFreshness(ctx context.Context, seconds, rate int) ([]result, error) {
	if seconds < 30 || rate < 1 {
		return nil, fmt.Errorf("freshness: --freshness-seconds %d, --freshness-rate %d: at least 30 s and 1 tx/s", seconds, rate)
	}
	e, err := startFreshEnv(ctx)
	if err != nil {
		return nil, err
	}
	defer e.close()
	db, err := e.src.DB(ctx, "tpcc")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	began := time.Now()
	if err := e.fullBackup(ctx); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "freshness: tpcc populated, full backup in %s; %d s of traffic at %d tx/s\n",
		time.Since(began).Round(time.Millisecond), seconds, rate)

	for k := range oltpConns { // one set of writers for both phases: each knows its rows
		e.writers = append(e.writers, newOLTPWriter(k))
	}
	m := newMarkers()
	traffic := time.Duration(seconds) * time.Second
	startPos, err := masterPos(ctx, e.src)
	if err != nil {
		return nil, err
	}
	var load freshLoad
	var polls freshPolls
	var pollers []poller
	for _, cycle := range freshPollers {
		pollers = append(pollers, func(ctx context.Context, traffic <-chan struct{}) error {
			return e.poll(ctx, traffic, cycle, m, &polls)
		})
	}
	elapsed, refreshes, err := e.runTraffic(ctx, db, traffic, rate, m, &load, pollers)
	if err != nil {
		return nil, err
	}
	endPos, err := masterPos(ctx, e.src)
	if err != nil {
		return nil, err
	}
	events, err := e.store.CountEvents(ctx, freshSource)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "freshness: %d transactions in %s, binlog %s to %s, %d row events captured in all\n",
		load.txns.Load(), elapsed.Round(time.Millisecond), startPos, endPos, events)
	// The session's phase: the same traffic with the session poller alone.
	ms := newMarkers()
	ms.next = m.next // the marker table holds the first phase's
	var sload freshLoad
	var session sessionPolls
	fmt.Fprintf(os.Stderr, "freshness: %d s of traffic at %d tx/s, one session asking every %s\n", seconds, rate, freshAskEvery)
	if _, _, err := e.runTraffic(ctx, db, traffic, rate, ms, &sload, []poller{
		func(ctx context.Context, traffic <-chan struct{}) error {
			return e.pollSession(ctx, traffic, ms, &session)
		},
	}); err != nil {
		return nil, err
	}
	return append(freshResults(m, &load, &polls, elapsed, refreshes, events),
		sessionResult(ms, &session, float64(sload.txns.Load())/traffic.Seconds(), medianOf(polls.wall[modeAll]))), nil
}

// poller polls until traffic is closed (and may go on after it).
type poller func(ctx context.Context, traffic <-chan struct{}) error

// runTraffic runs the paced workload at rate, the markers m and a Refresh
// every freshRefreshEvery for d, with pollers beside it until they return;
// it returns how long the traffic ran and the refreshes published.
func (e *freshEnv) runTraffic(ctx context.Context, db *sql.DB, d time.Duration, rate int, m *markers, load *freshLoad,
	pollers []poller) (elapsed time.Duration, refreshes int, err error) {
	tctx, stop := context.WithTimeout(ctx, d)
	defer stop()
	var trafficEnd time.Time
	g, gctx := errgroup.WithContext(tctx)
	g.Go(func() error {
		defer func() { trafficEnd = time.Now() }()
		return pacedWriters(gctx, db, e.writers, rate, load)
	})
	g.Go(func() error { return m.write(gctx, db) })
	g.Go(func() error { n, err := e.refreshEvery(gctx); refreshes = n; return err })
	trafficStart := time.Now()
	// The pollers outlive the traffic (the tail's drains its last markers).
	pg, pctx := errgroup.WithContext(ctx)
	for _, p := range pollers {
		pg.Go(func() error { return p(pctx, tctx.Done()) })
	}
	if err := g.Wait(); err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return 0, 0, err
	}
	if err := pg.Wait(); err != nil {
		return 0, 0, err
	}
	return trafficEnd.Sub(trafficStart), refreshes, nil
}

// startFreshEnv starts the source (tpcc populated, a marker table), the
// index with capture running, Temporal with a worker, and builds dbtrail.
// On error nothing is left running.
func startFreshEnv(ctx context.Context) (e *freshEnv, err error) {
	e = &freshEnv{}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	if e.dir, err = os.MkdirTemp("", "dbtrail-bench-fresh-"); err != nil {
		return nil, err
	}
	e.undo = append(e.undo, func() { os.RemoveAll(e.dir) })
	if e.bin, err = buildDbtrail(ctx, e.dir); err != nil {
		return nil, err
	}
	src, idx, stop, err := startSourceAndIndex(ctx)
	if err != nil {
		return nil, err
	}
	e.src, e.idx = src, idx
	e.undo = append(e.undo, stop)
	if err := e.populate(ctx); err != nil {
		return nil, err
	}
	if err := e.idx.Exec(ctx, "CREATE DATABASE dbtrail"); err != nil {
		return nil, err
	}
	if e.store, err = index.Open(ctx, e.idx.DSN("dbtrail")); err != nil {
		return nil, err
	}
	e.undo = append(e.undo, func() { e.store.Close() })
	if err := e.store.Init(ctx); err != nil {
		return nil, fmt.Errorf("init index: %w", err)
	}
	e.startCapture(ctx)
	if e.srv, err = embedded.StartServer(ctx, embedded.ServerConfig{DataDir: filepath.Join(e.dir, "temporal"), FrontendAddr: "127.0.0.1:0"}); err != nil {
		return nil, err
	}
	e.undo = append(e.undo, e.srv.Stop)
	if e.c, err = temporalclient.Dial(ctx, e.srv.FrontendAddr(), e.srv.Namespace(), nil); err != nil {
		return nil, err
	}
	e.undo = append(e.undo, e.c.Close)
	work := filepath.Join(e.dir, "work")
	e.acts = &activities.Activities{
		Sources:   map[string]activities.Source{freshSource: {Name: freshSource, DSN: e.src.DSN("")}},
		Index:     e.store,
		BackupDir: filepath.Join(e.dir, "backups"),
		WorkDir:   work,
		DumpStall: 2 * time.Minute,
		Engines:   activities.NewEnginePool(work, ""),
		Retention: retention.Policy{KeepSnapshots: retention.DefaultKeepSnapshots}, // a worker's default policy
	}
	e.undo = append(e.undo, func() { e.acts.Engines.Close() })
	e.w = worker.New(e.c, payload.TaskQueue, workers.Options())
	workers.RegisterAll(e.w, e.acts)
	if err := e.w.Start(); err != nil {
		return nil, err
	}
	e.undo = append(e.undo, e.w.Stop)
	return e, nil
}

// populate creates and fills tpcc and the marker table.
func (e *freshEnv) populate(ctx context.Context) error {
	if err := e.src.Exec(ctx, "CREATE DATABASE tpcc"); err != nil {
		return err
	}
	db, err := e.src.DB(ctx, "tpcc")
	if err != nil {
		return err
	}
	defer db.Close()
	stmts := append(oltpSchema(), oltpPopulation()...)
	stmts = append(stmts, "CREATE TABLE fresh_marker (id INT PRIMARY KEY, note VARCHAR(20))", "INSERT INTO fresh_marker VALUES (0, 'start')")
	for _, stmt := range stmts {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("populate tpcc: %q: %w", abbreviate(stmt, 120), err)
		}
	}
	return nil
}

// startCapture runs capture into the index until e closes.
func (e *freshEnv) startCapture(ctx context.Context) {
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- capture.Run(cctx, capture.Config{Source: freshSource, SourceDSN: e.src.DSN(""), Logger: slog.Default()}, e.store)
	}()
	e.undo = append(e.undo, func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			slog.Warn("freshness benchmark: capture", slog.String("error", err.Error()))
		}
	})
}

// waitCaughtUp waits until capture's checkpoint is at the source's binlog
// end.
func (e *freshEnv) waitCaughtUp(ctx context.Context) error {
	want, err := masterPos(ctx, e.src)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		cp, ok, err := e.store.LoadCheckpoint(ctx, freshSource)
		if err != nil {
			return err
		}
		if ok {
			if c, err := binlogpos.Compare(cp.Pos().Coords(), want); err == nil && c >= 0 {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("capture did not reach %s in 5 minutes", want)
}

// fullBackup takes the first snapshot once capture has caught up.
func (e *freshEnv) fullBackup(ctx context.Context) error {
	if err := e.waitCaughtUp(ctx); err != nil {
		return err
	}
	run, err := temporalclient.StartWorkflow(ctx, e.c, client.StartWorkflowOptions{ID: payload.FullBackupWorkflowID(freshSource), TaskQueue: payload.TaskQueue},
		workflows.FullBackup, payload.FullBackupInput{Source: freshSource})
	if err != nil {
		return err
	}
	var res workflows.FullBackupResult
	if err := run.Get(ctx, &res); err != nil {
		return fmt.Errorf("full backup: %w", err)
	}
	return nil
}

// refreshEvery runs a Refresh every freshRefreshEvery until ctx ends and
// returns how many published a snapshot.
func (e *freshEnv) refreshEvery(ctx context.Context) (int, error) {
	n := 0
	t := time.NewTicker(freshRefreshEvery)
	defer t.Stop()
	for round := 1; ; round++ {
		select {
		case <-ctx.Done():
			return n, nil
		case <-t.C:
		}
		// The run is waited for past the traffic's end: a refresh cut
		// short is not what a schedule does.
		run, err := temporalclient.StartWorkflow(context.WithoutCancel(ctx), e.c, client.StartWorkflowOptions{ID: fmt.Sprintf("fresh-refresh-%d", round), TaskQueue: payload.TaskQueue},
			workflows.Refresh, payload.RefreshInput{Source: freshSource, TableDeltas: true})
		if err != nil {
			return n, err
		}
		var res workflows.RefreshResult
		if err := run.Get(context.WithoutCancel(ctx), &res); err != nil {
			return n, fmt.Errorf("refresh %d: %w", round, err)
		}
		if res.SnapshotID != "" {
			n++
		}
		fmt.Fprintf(os.Stderr, "freshness: refresh %d published %q (refused %v)\n", round, res.SnapshotID, res.Refused)
	}
}

// markerDB is what the marker writer runs on.
type markerDB interface {
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}
