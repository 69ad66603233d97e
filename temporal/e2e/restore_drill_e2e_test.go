package e2e

import (
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workflows"
)

// TestScheduledRestoreDrill keeps the drill schedule dev and worker keep
// (--drill-every), triggers it once instead of waiting a day, and follows
// the run it starts: every table of the source at the latest moment is
// restored into the scratch server and verified, the scratch server holds
// nothing of it afterwards, the verdict is in the index and `dbtrail
// status` prints it. A drill that fails (an unreachable scratch server) is
// recorded as failed with its reason.
func TestScheduledRestoreDrill(t *testing.T) {
	build := buildDbtrailAsync(t)
	e := newBackupEnv(t)
	restoreFixture(t, e)
	e.waitCaughtUp(t)
	e.fullBackup(t)
	restoreChanges(t, e, 1)
	e.waitCaughtUp(t)
	scratch := testsuite.StartTarget(t, 34)
	must(t, jobs.EnsureSearchAttributes(e.ctx, e.c, temporalclient.DefaultNamespace))

	in := payload.RestoreDrillInput{TargetAddr: scratch.Addr(), Restore: payload.RestoreInput{
		RestoreSpec: payload.RestoreSpec{Source: "main", At: "latest", Target: e.target(t, scratch), Drill: true}, Parallel: 2}}
	spec := temporalclient.ScheduleSpec{ID: payload.DrillWorkflowID("main"), Every: 24 * time.Hour, Workflow: "RestoreDrill",
		TaskQueue: payload.TaskQueue, Args: []any{in}, Attrs: jobs.SourceAttrs("main")}
	must(t, temporalclient.EnsureSchedule(e.ctx, e.c, spec))
	run := triggerOnce(t, e, spec.ID)
	var res workflows.RestoreResult
	if err := run.Get(e.ctx, &res); err != nil {
		t.Fatalf("scheduled drill: %v", err)
	}
	if len(res.Tables) != len(restoreTables) || res.Rows == 0 || len(res.Dropped) != 1 || res.Dropped[0] != "dbtrail_drill_app" {
		t.Fatalf("scheduled drill: %+v", res)
	}
	tdb, err := scratch.DB(e.ctx, "")
	must(t, err)
	defer tdb.Close()
	var left int
	must(t, tdb.QueryRowContext(e.ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys', 'test')").Scan(&left))
	if left != 0 {
		t.Fatalf("the drill left %d schemas in the scratch server", left)
	}
	d, ok, err := e.store.LastDrill(e.ctx, "main")
	must(t, err)
	if !ok || d.Verdict != index.DrillOK || d.Rows != res.Rows || d.Tables != len(restoreTables) || d.Cut != res.Cut.String() ||
		d.Target != scratch.Addr() || d.Moment != "latest" || d.Snapshot != res.Base || d.Took() <= 0 {
		t.Fatalf("recorded drill %+v, result %+v", d, res)
	}

	bin := build()
	status := func() string { return runStatus(t, e, bin) }
	out := status()
	t.Logf("status:\n%s", out)
	if !strings.Contains(out, "last drill  OK at ") || !strings.Contains(out, "cut "+res.Cut.String()) {
		t.Fatalf("status does not show the drill:\n%s", out)
	}

	// The scratch server gone: the drill fails and says why.
	must(t, scratch.Stop())
	run = triggerOnce(t, e, spec.ID)
	if err := run.Get(e.ctx, nil); err == nil {
		t.Fatal("a drill into a stopped server passed")
	}
	d, ok, err = e.store.LastDrill(e.ctx, "main")
	must(t, err)
	if !ok || d.Verdict != index.DrillFailed || !strings.Contains(d.Failure, scratch.Addr()) {
		t.Fatalf("failed drill recorded as %+v", d)
	}
	if out := status(); !strings.Contains(out, "last drill  FAILED") || !strings.Contains(out, "failure: ") {
		t.Fatalf("status does not show the failed drill:\n%s", out)
	}
	must(t, temporalclient.DeleteSchedule(e.ctx, e.c, spec.ID))
}

// triggerOnce starts a run of schedule id now and returns it, once the
// schedule reports it.
func triggerOnce(t *testing.T, e *backupEnv, id string) client.WorkflowRun {
	t.Helper()
	h := e.c.ScheduleClient().GetHandle(e.ctx, id)
	before, err := h.Describe(e.ctx)
	must(t, err)
	n := len(before.Info.RecentActions)
	must(t, h.Trigger(e.ctx, client.ScheduleTriggerOptions{}))
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		d, err := h.Describe(e.ctx)
		must(t, err)
		if len(d.Info.RecentActions) > n {
			a := d.Info.RecentActions[len(d.Info.RecentActions)-1].StartWorkflowResult
			return e.c.GetWorkflow(e.ctx, a.WorkflowID, a.FirstExecutionRunID)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("schedule %s started no run within a minute of its trigger", id)
	return nil
}
