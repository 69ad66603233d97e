package e2e

import (
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workers"
	"github.com/dbtrail/dbtrail/workflows"
)

// recordOperations records, after the backup, refresh, export and restore
// cases of TestRecordHistories, the workflows that keep a source's backup
// in shape: Ping, Verify (of the current snapshot's tables with a key,
// nothing changed since it), Archive (two hours stamped 40 hours ago), Reindex (those two
// hours into an empty index on another server), RetentionPreview and
// Retention (the newest two snapshots kept, locally and on the store).
func (r *historyRecorder) recordOperations(t *testing.T, w *workload) {
	t.Helper()
	e := r.a
	var pong string
	id, runID := r.start(t, client.StartWorkflowOptions{ID: "ping-history"}, &pong, workers.PingName, "history")
	if pong != "pong: history" {
		t.Fatalf("Ping answered %q", pong)
	}
	r.save(t, "ping-pong", id, runID)

	// The current snapshot is the source as it is: both tables with a key
	// match (app.flk, a FLOAT table without one, keeps the dump's digits
	// and does not).
	e.waitCaughtUp(t)
	var ver calls.VerifySnapshotResult
	id, runID = r.start(t, client.StartWorkflowOptions{ID: payload.VerifyWorkflowID("main")}, &ver,
		workflows.Verify, payload.VerifyInput{Source: "main", Tables: []string{"app.items", "app.fl"}})
	if ver.SnapshotID == "" || ver.Match != 2 || ver.Mismatch+ver.Errors+ver.Inconclusive != 0 {
		t.Fatalf("verify of the current snapshot: %+v", ver)
	}
	r.save(t, "verify-current", id, runID)

	// Two past hours of changes: the Archive moves them to the store.
	base := time.Now().UTC().Truncate(time.Hour).Add(-40 * time.Hour)
	for k := range 2 {
		hour := base.Add(time.Duration(k) * time.Hour)
		e.stampHour(t, hour, 60)
		w.exec(t, e.backupEnv, "UPDATE items SET n = ? WHERE id <= 3", 1000+k)
		e.stampHour(t, hour, 120)
		w.exec(t, e.backupEnv, "INSERT INTO items (id, v) VALUES (?, 'past')", 200+k)
	}
	e.stampHour(t, time.Time{}, 0)
	e.waitCaughtUp(t)
	var arch workflows.ArchiveResult
	id, runID = r.start(t, client.StartWorkflowOptions{ID: payload.ArchiveWorkflowID("main")}, &arch,
		workflows.Archive, payload.ArchiveInput{Source: "main", IndexHours: 24})
	if len(arch.Hours) != 2 || arch.History == nil || arch.Location == "" {
		t.Fatalf("archive of two past hours: %+v", arch)
	}
	r.save(t, "archive-two-hours", id, runID)

	// The two archived hours into an empty index on another server, by a
	// worker on its own task queue that uses that index.
	srv := testsuite.StartIndex(t)
	r.secrets = append(r.secrets, srv.Password, srv.DSN("dbtrail"))
	store := e.otherIndexOn(t, srv)
	const queue = "reindex"
	e.queueWorker(t, store, queue)
	var ri workflows.ReindexResult
	id, runID = r.start(t, client.StartWorkflowOptions{ID: payload.ReindexWorkflowID("main"), TaskQueue: queue}, &ri,
		workflows.Reindex, payload.ReindexInput{Source: "main"})
	if ri.Hours != 2 || ri.Events == 0 || len(ri.Failed) != 0 {
		t.Fatalf("reindex of the two archived hours: %+v", ri)
	}
	r.save(t, "reindex-two-hours", id, runID)

	// Retention keeping the newest two snapshots: the preview plans the
	// removals, the run makes them.
	r.e.acts.Retention = retention.Policy{KeepSnapshots: 2} // the worker's policy
	defer func() { r.e.acts.Retention = retention.Policy{} }()
	in := payload.RetentionInput{Source: "main"}
	var plan retention.Plan
	id, runID = r.start(t, client.StartWorkflowOptions{ID: "retention-preview-main"}, &plan, workflows.RetentionPreview, in)
	if len(plan.Removals()) == 0 {
		t.Fatalf("the retention preview removes nothing: %+v", plan)
	}
	r.save(t, "retentionpreview-keep-two", id, runID)
	var ret calls.RetentionResult
	id, runID = r.start(t, client.StartWorkflowOptions{ID: payload.RetentionWorkflowID("main")}, &ret, workflows.Retention, in)
	if len(ret.Removed) != len(plan.Removals()) || len(ret.Locked)+len(ret.Failed) != 0 || ret.Skipped != "" {
		t.Fatalf("retention keeping two snapshots: %+v (the preview removed %d)", ret, len(plan.Removals()))
	}
	r.save(t, "retention-keep-two", id, runID)
}

// start runs workflow wf with args to its end (on opts.TaskQueue, else
// dbtrail's task queue), decodes its result into res and returns its id
// and run id.
func (r *historyRecorder) start(t *testing.T, opts client.StartWorkflowOptions, res any, wf any, args ...any) (string, string) {
	t.Helper()
	if opts.TaskQueue == "" {
		opts.TaskQueue = payload.TaskQueue
	}
	run, err := temporalclient.StartWorkflow(r.e.ctx, r.e.c, opts, wf, args...)
	must(t, err)
	if err := run.Get(r.e.ctx, res); err != nil {
		t.Fatalf("%s: %v", opts.ID, err)
	}
	return opts.ID, run.GetRunID()
}
