package e2e

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/capture"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workers"
	"github.com/dbtrail/dbtrail/workflows"
)

// otherIndex starts another index server (capture leases are named locks
// of a server, so the env's capture would hold this index's too) and opens
// an empty index in it.
func (e *archiveEnv) otherIndex(t *testing.T) *index.Store {
	t.Helper()
	return e.otherIndexOn(t, testsuite.StartIndex(t))
}

// otherIndexOn opens an empty index in a new database dbtrail of srv.
func (e *archiveEnv) otherIndexOn(t *testing.T, srv *testsuite.Server) *index.Store {
	t.Helper()
	must(t, srv.Exec(e.ctx, "CREATE DATABASE dbtrail"))
	st, err := index.Open(e.ctx, srv.DSN("dbtrail"))
	must(t, err)
	t.Cleanup(func() { st.Close() })
	must(t, st.Init(e.ctx))
	return st
}

// queueWorker runs a worker with the env's configuration but store as its
// index, on its own task queue.
func (e *archiveEnv) queueWorker(t *testing.T, store *index.Store, queue string) *activities.Activities {
	t.Helper()
	work := filepath.Join(e.dir, queue)
	acts := &activities.Activities{Sources: e.acts.Sources, Index: store, BackupDir: e.acts.BackupDir, WorkDir: work,
		Engines: activities.NewEnginePool(work, ""), Remote: e.remote}
	t.Cleanup(func() { acts.Engines.Close() })
	w := worker.New(e.c, queue, workers.Options())
	workers.RegisterAll(w, acts)
	must(t, w.Start())
	t.Cleanup(w.Stop)
	return acts
}

// restoreIndex runs Reindex on queue and returns its result and error.
func (e *archiveEnv) restoreIndex(t *testing.T, queue, url string) (workflows.ReindexResult, error) {
	t.Helper()
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.ReindexWorkflowID("main") + "-" + queue, TaskQueue: queue},
		workflows.Reindex, payload.ReindexInput{Source: "main", ArchiveURL: url})
	must(t, err)
	var res workflows.ReindexResult
	err = run.Get(e.ctx, &res)
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.HasDetails() {
		must(t, app.Details(&res))
	}
	return res, err
}

// runCapture runs capture of the source into store until the test ends;
// the returned channel gets its error.
func (e *archiveEnv) runCapture(t *testing.T, store *index.Store) <-chan error {
	t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() {
		done <- capture.Run(ctx, capture.Config{Source: "main", SourceDSN: e.source.DSN(""), ServerID: 777,
			Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}, store)
	}()
	t.Cleanup(cancel)
	return done
}

// captureAfterRestore starts capture into the restored index store, runs
// steps of traffic, waits until both indexes caught up, and checks that
// store then holds every event once, with the seq it was captured with:
// the archived ones and those the env's index holds. The returned channel
// gets capture's error.
func (e *archiveEnv) captureAfterRestore(t *testing.T, w *workload, store *index.Store, steps int) <-chan error {
	t.Helper()
	capDone := e.runCapture(t, store)
	for range steps {
		w.step(t, e.backupEnv, 3)
	}
	e.waitCaughtUp(t)
	e.waitStoreCaughtUp(t, store)
	full := indexEvents(t, e.ctx, e.store, "main")
	stored, _ := storedEvents(t, e.ctx, e.remote, "main")
	for _, ev := range stored {
		full[ev.Seq] = ev
	}
	checkEveryEventOnce(t, full, values(indexEvents(t, e.ctx, store, "main")))
	return capDone
}

// waitStoreCaughtUp is waitCaughtUp for another index.
func (e *archiveEnv) waitStoreCaughtUp(t *testing.T, store *index.Store) {
	t.Helper()
	var want binlogpos.Position
	var a, b any
	must(t, e.src.QueryRowContext(e.ctx, "SHOW MASTER STATUS").Scan(&want.File, &want.Pos, &a, &b))
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		cp, ok, err := store.LoadCheckpoint(e.ctx, "main")
		must(t, err)
		if c, err := binlogpos.Compare(cp.Pos().Coords(), want); ok && err == nil && c >= 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("capture into the restored index did not reach %s", want)
}

// archivedTraffic fills eight stamped past hours (the tables' first rows
// in the first), then traffic of the current hour, takes a full backup,
// runs more traffic, and archives the eight hours. It returns every event
// captured, by seq, and the last archived seq.
func archivedTraffic(t *testing.T, e *archiveEnv, w *workload, base time.Time) (map[uint64]change.Event, uint64) {
	t.Helper()
	e.stampHour(t, base, 0)
	w.setup(t, e.backupEnv, 30)
	for k := range 8 {
		e.pastTraffic(t, w, base.Add(time.Duration(k)*time.Hour), 25)
	}
	for range 10 {
		w.step(t, e.backupEnv, 3)
	}
	e.waitCaughtUp(t)
	e.fullBackup(t)
	for range 10 {
		w.step(t, e.backupEnv, 3)
	}
	e.waitCaughtUp(t)
	orig := indexEvents(t, e.ctx, e.store, "main")
	res := e.runArchive(t, 24)
	if len(res.Hours) != 8 {
		t.Fatalf("archived %d hours", len(res.Hours))
	}
	var last uint64
	for _, ev := range orig {
		if ev.CommitTime.Before(base.Add(8*time.Hour)) && ev.Seq > last {
			last = ev.Seq
		}
	}
	return orig, last
}

// TestReindex: the archives of eight hours restore into an empty
// index: every event equals the original (seq, positions, images), the
// history and the checkpoint after the last archived transaction are back,
// a second restore is refused, capture resumes there with no gap and
// captures the same events with the same seqs, and a refresh from the full
// backup taken before equals the live tables. With the binlog purged, a
// restore records a capture gap instead, and capture stops at it.
func TestReindex(t *testing.T) {
	e := newArchiveEnv(t)
	base := time.Now().UTC().Truncate(time.Hour).Add(-40 * time.Hour)
	w := newWorkload(21)
	orig, lastArchived := archivedTraffic(t, e, w, base)

	storeB := e.otherIndex(t)
	e.queueWorker(t, storeB, "restore-b")
	res, err := e.restoreIndex(t, "restore-b", e.url)
	if err != nil {
		t.Fatalf("Reindex: %v", err)
	}
	t.Logf("restored %d hours, %d events, seq %d..%d; %s", res.Hours, res.Events, res.FirstSeq, res.LastSeq, res.Outcome)
	if res.Hours != 8 || res.FirstSeq != 1 || res.LastSeq != lastArchived || len(res.Gaps) != 0 || !strings.Contains(res.Outcome, "no gap") {
		t.Fatalf("restore result %+v (last archived seq %d)", res, lastArchived)
	}
	restored := indexEvents(t, e.ctx, storeB, "main")
	if int64(len(restored)) != res.Events || uint64(len(restored)) != lastArchived {
		t.Fatalf("%d events restored, result says %d, last archived seq %d", len(restored), res.Events, lastArchived)
	}
	for seq, ev := range restored {
		if d := eventDiff(ev, orig[seq]); d != "" {
			t.Fatalf("restored seq %d: %s", seq, d)
		}
	}
	cp, ok, err := storeB.LoadCheckpoint(e.ctx, "main")
	must(t, err)
	last := orig[lastArchived]
	if !ok || cp.LastSeq != lastArchived || cp.BinlogFile != last.BinlogFile || cp.BinlogPos != last.EndPos {
		t.Fatalf("restored checkpoint %+v, last archived event %+v", cp, last)
	}
	if starts, _ := storeB.Starts(e.ctx, "main"); len(starts) != 1 {
		t.Fatalf("restored starts %+v", starts)
	}
	if _, err := e.restoreIndex(t, "restore-b", e.url); !isAppErr(err, payload.ErrIndexNotEmpty) {
		t.Fatalf("second restore: %v", err)
	}

	// Capture resumes after the last archived transaction and captures the
	// rest with the same seqs.
	capDone := e.captureAfterRestore(t, w, storeB, 5)
	if gaps, _ := storeB.Gaps(e.ctx, "main"); len(gaps) != 0 {
		t.Fatalf("gaps after the restore: %+v", gaps)
	}

	// A refresh on the restored index from the full backup equals the live
	// tables.
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.RefreshWorkflowID("main"), TaskQueue: "restore-b"},
		workflows.Refresh, payload.RefreshInput{Source: "main", TableDeltas: true, NoFullBackup: true})
	must(t, err)
	var rr workflows.RefreshResult
	must(t, run.Get(e.ctx, &rr))
	if rr.Refused {
		t.Fatalf("refresh on the restored index refused: %v", rr.Reasons)
	}
	checkLive(t, e.backupEnv, newEngine(t), e.current(t), "refresh on the restored index")

	// The binlog after the last archived transaction is purged: the
	// restore records a gap there, and capture stops at it.
	newest := e.purgeBinlogsBefore(t, last.BinlogFile)
	w.step(t, e.backupEnv, 2)
	e.waitCaughtUp(t)
	e.waitStoreCaughtUp(t, storeB)
	storeC := e.otherIndex(t)
	e.queueWorker(t, storeC, "restore-c")
	resC, err := e.restoreIndex(t, "restore-c", "")
	if err != nil {
		t.Fatalf("Reindex after the purge: %v", err)
	}
	gaps, err := storeC.Gaps(e.ctx, "main")
	must(t, err)
	if len(resC.Gaps) != 1 || len(gaps) != 1 || gaps[0].FromFile != last.BinlogFile || gaps[0].FromPos != last.EndPos ||
		gaps[0].ToFile != newest || gaps[0].ToPos != 4 || !strings.Contains(resC.Outcome, "gap") {
		t.Fatalf("restore after the purge: %+v, gaps %+v", resC, gaps)
	}
	capC := e.runCapture(t, storeC)
	select {
	case err := <-capC:
		var ge *capture.GapError
		if !errors.As(err, &ge) {
			t.Fatalf("capture after a restore across a purged binlog: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("capture did not stop at the restored gap")
	}
	if gaps, _ := storeC.Gaps(e.ctx, "main"); len(gaps) != 1 {
		t.Fatalf("capture recorded the gap again: %+v", gaps)
	}
	select {
	case err := <-capDone:
		t.Fatalf("capture into the restored index stopped: %v", err)
	default:
	}
}

// isAppErr reports whether err is an application error of type kind.
func isAppErr(err error, kind string) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == kind
}

// purgeBinlogsBefore rotates the source's binlog and purges every file up
// to and including file, waiting until the server lets it go (MariaDB
// keeps a binlog until its binlog checkpoint and while a reader is on it);
// it returns the oldest file left.
func (e *backupEnv) purgeBinlogsBefore(t *testing.T, file string) string {
	t.Helper()
	_, err := e.src.ExecContext(e.ctx, "FLUSH BINARY LOGS")
	must(t, err)
	var newest string
	var pos uint64
	var a, b any
	must(t, e.src.QueryRowContext(e.ctx, "SHOW MASTER STATUS").Scan(&newest, &pos, &a, &b))
	deadline := time.Now().Add(time.Minute)
	for {
		_, err = e.src.ExecContext(e.ctx, "PURGE BINARY LOGS TO '"+newest+"'")
		must(t, err)
		var first string
		var size any
		rows, err := e.src.QueryContext(e.ctx, "SHOW BINARY LOGS")
		must(t, err)
		if rows.Next() {
			cols, _ := rows.Columns()
			dest := []any{&first, &size}
			for len(dest) < len(cols) {
				dest = append(dest, new(any))
			}
			must(t, rows.Scan(dest...))
		}
		rows.Close()
		if c, err := binlogpos.Compare(binlogpos.Position{File: first}, binlogpos.Position{File: file}); err == nil && c > 0 {
			return first
		}
		if time.Now().After(deadline) {
			t.Fatalf("binlog %s is still on the source (oldest %s)", file, first)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
