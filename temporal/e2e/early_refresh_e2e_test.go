package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workers"
	"github.com/dbtrail/dbtrail/workflows"
)

// earlyMetrics reads the early refresh's metrics from reg: name, or
// name/outcome for the checks.
func earlyMetrics(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	must(t, err)
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			name := f.GetName()
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" {
					name += "/" + l.GetValue()
				}
			}
			if c := m.GetCounter(); c != nil {
				out[name] = c.GetValue()
			} else {
				out[name] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

// refreshRuns lists the Refresh runs of the namespace (open and closed) by
// workflow ID.
func (e *backupEnv) refreshRuns(t *testing.T) []string {
	t.Helper()
	resp, err := e.c.ListWorkflow(e.ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: temporalclient.DefaultNamespace,
		PageSize: 100, Query: "WorkflowType = 'Refresh'"})
	must(t, err)
	var ids []string
	for _, ex := range resp.GetExecutions() {
		ids = append(ids, ex.GetExecution().GetWorkflowId())
	}
	return ids
}

// waitMetric waits until cond holds of the metrics (a check of the watch
// happened), failing after a generous bound (never a timing assertion).
func waitMetric(t *testing.T, reg *prometheus.Registry, what string, cond func(map[string]float64) bool) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		m := earlyMetrics(t, reg)
		if cond(m) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: metrics %v", what, m)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTailEarlyRefresh: the worker's early-refresh watch (workers.EarlyRefresh
// running its loop, as `dbtrail worker` and `dev` do) over a real source,
// capture and index, with a bound of 200 events and no refresh schedule.
// 150 events after the snapshot: checks see them and no Refresh starts.
// 100 more (250) while a refresh of the source is running (held on a task
// queue no worker polls): the watch neither joins nor doubles it. Once it
// is gone, the watch starts the refresh early, under the snapshot's early
// label; it publishes a snapshot holding every row, after which the tail is
// empty and nothing more starts. Proved by the runs in the history and the
// watch's counters, never by a clock.
func TestTailEarlyRefresh(t *testing.T) {
	e := newBackupEnv(t)
	e.exec(t, "CREATE TABLE ev (id INT PRIMARY KEY, v INT)")
	e.exec(t, "INSERT INTO ev VALUES (1, 1)")
	first := e.fullBackup(t).SnapshotID
	insert := func(from, n int) {
		var vals []string
		for i := from; i < from+n; i++ {
			vals = append(vals, fmt.Sprintf("(%d, %d)", i, i))
		}
		e.exec(t, "INSERT INTO ev VALUES "+strings.Join(vals, ","))
	}

	reg := prometheus.NewRegistry()
	svc := jobs.New(jobs.Config{Client: e.c, Namespace: temporalclient.DefaultNamespace, TaskQueue: payload.TaskQueue})
	w, err := workers.NewEarlyRefresh(reg, workers.EarlyRefreshConfig{Source: "main", SourceDir: filepath.Join(e.acts.BackupDir, "main"),
		Index: e.store, Jobs: svc, Input: payload.RefreshInput{TableDeltas: true}, MaxEvents: 200})
	must(t, err)
	wctx, stop := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() { defer close(done); w.Run(wctx, 100*time.Millisecond) }()
	t.Cleanup(func() { stop(); <-done })

	// Below the bound: measured, nothing started.
	insert(100, 150)
	m := waitMetric(t, reg, "a check of 150 events", func(m map[string]float64) bool { return m["dbtrail_tail_events"] == 150 })
	base := m["dbtrail_early_refresh_checks_total/below"]
	waitMetric(t, reg, "two more checks", func(m map[string]float64) bool { return m["dbtrail_early_refresh_checks_total/below"] >= base+2 })
	if runs := e.refreshRuns(t); len(runs) != 0 {
		t.Fatalf("a tail of 150 events under a bound of 200 started refreshes %v", runs)
	}

	// Past the bound while a refresh of the source runs: not doubled.
	held, err := jobs.New(jobs.Config{Client: e.c, Namespace: temporalclient.DefaultNamespace, TaskQueue: "nobody-polls"}).Start(e.ctx,
		jobs.Request{Kind: jobs.Refresh, Source: "main", Label: "held", Input: payload.RefreshInput{Source: "main"}})
	must(t, err)
	for deadline := time.Now().Add(time.Minute); len(e.refreshRuns(t)) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s is not listed", held.ID)
		}
	}
	insert(300, 100)
	m = waitMetric(t, reg, "two checks past the bound while a refresh runs", func(m map[string]float64) bool {
		return m["dbtrail_early_refresh_checks_total/running"] >= 2
	})
	if m["dbtrail_tail_events"] != 250 || m["dbtrail_early_refreshes_total"] != 0 {
		t.Fatalf("while %s runs: metrics %v", held.ID, m)
	}
	if runs := e.refreshRuns(t); len(runs) != 1 || runs[0] != held.ID {
		t.Fatalf("while %s runs, Refresh runs are %v", held.ID, runs)
	}

	// The running refresh gone: the watch starts one early.
	must(t, e.c.TerminateWorkflow(e.ctx, held.ID, "", "test: let the watch start its refresh"))
	waitMetric(t, reg, "an early refresh", func(m map[string]float64) bool { return m["dbtrail_early_refreshes_total"] == 1 })
	early := jobs.ID("main", workers.EarlyLabel(first))
	var res workflows.RefreshResult
	must(t, e.c.GetWorkflow(e.ctx, early, "").Get(e.ctx, &res))
	if res.Refused || res.SnapshotID == "" || res.Prev != first {
		t.Fatalf("early refresh %s: %+v", early, res)
	}
	if got := e.current(t).Manifest.SnapshotID; got != res.SnapshotID {
		t.Fatalf("current is %s, the early refresh published %s", got, res.SnapshotID)
	}
	var rows int
	must(t, e.src.QueryRowContext(e.ctx, "SELECT count(*) FROM ev").Scan(&rows))
	if res.Position.Seq == 0 || rows != 251 {
		t.Fatalf("early refresh at %s; source rows %d", res.Position, rows)
	}

	// The new snapshot holds the tail: nothing more starts.
	m = waitMetric(t, reg, "a check after the early refresh", func(m map[string]float64) bool { return m["dbtrail_tail_events"] == 0 })
	base = m["dbtrail_early_refresh_checks_total/below"]
	m = waitMetric(t, reg, "two more checks", func(m map[string]float64) bool { return m["dbtrail_early_refresh_checks_total/below"] >= base+2 })
	runs := e.refreshRuns(t)
	if len(runs) != 2 || m["dbtrail_early_refreshes_total"] != 1 || m["dbtrail_early_refresh_checks_total/error"] != 0 {
		t.Fatalf("after the early refresh: runs %v, metrics %v", runs, m)
	}
	t.Logf("runs %v; metrics %v", runs, m)
}
