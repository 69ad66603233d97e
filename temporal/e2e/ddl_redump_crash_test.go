package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// TestRefreshRedumpSurvivesWorkerKill kills the worker process while a
// refresh's partial re-dump converts the one table a schema change left
// unproven (a 300k-row VARCHAR column made INT); another table's folded
// change rides in the same refresh. The kill is aimed by the re-dump run's
// state at its ConvertTable step and lands in it. A new worker finishes:
// the refresh publishes without a full backup, having re-dumped that table
// alone; the snapshot equals the source, no partial snapshot is left, and
// the lost sessions' staging folders go with the next refresh.
func TestRefreshRedumpSurvivesWorkerKill(t *testing.T) {
	t.Parallel() // a waiting test: see TestMain
	bin := buildDbtrail(t)
	e := newBackupEnv(t, withoutWorker())
	eng := newEngine(t)
	exec := func(qs ...string) { e.execAll(t, qs...) }
	exec(`CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(60), code VARCHAR(12))`,
		`INSERT INTO big SELECT seq, CONCAT('row-', seq, REPEAT('x', seq % 40)), seq FROM seq_1_to_300000`,
		`CREATE TABLE small (id INT PRIMARY KEY, v VARCHAR(10))`,
		`INSERT INTO small SELECT seq, CONCAT('s', seq) FROM seq_1_to_100`)
	sourceDir := filepath.Join(e.acts.BackupDir, "main")
	wp := startWorkerProc(t, bin, e.frontend, e, e.indexDSN)
	e.waitCaughtUp(t)
	e.fullBackup(t)
	checkWatch := watchCurrent(t, sourceDir)
	exec("UPDATE big SET code = CONCAT(code, '7') WHERE id % 1000 = 0",
		"ALTER TABLE big MODIFY code INT",
		"UPDATE big SET code = -code WHERE id % 997 = 0",
		"ALTER TABLE small ADD COLUMN note VARCHAR(10) NULL",
		"INSERT INTO small VALUES (101, 'new', 'n')")
	e.waitCaughtUp(t)
	id := payload.RefreshWorkflowID("main")
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: id, TaskQueue: payload.TaskQueue},
		workflows.Refresh, payload.RefreshInput{Source: "main", TableDeltas: true})
	must(t, err)
	redumpID := payload.RedumpWorkflowID("main")
	redumpRun := waitRunning(t, e, redumpID)
	k := killInStep(t, e, wp, redumpID, redumpRun, "ConvertTable", "FinishPartial")
	if !k.Killed || !k.Landed {
		t.Fatalf("the kill did not land in the re-dump's ConvertTable: %+v", k)
	}
	t.Logf("worker killed in the re-dump's ConvertTable (attempt %d)", k.Attempt)
	wp = startWorkerProc(t, bin, e.frontend, e, e.indexDSN)
	var res workflows.RefreshResult
	gctx, cancel := context.WithTimeout(e.ctx, 4*time.Minute) // a bound for the failure message, not a timing assertion
	defer cancel()
	if err := run.Get(gctx, &res); err != nil {
		t.Fatalf("Refresh after the kill: %v\n%s\nworker output:\n%s", err, describeRuns(t, e, id, redumpID), wp.out.String())
	}
	if res.Refused || res.FullBackup != "" || res.Redump == nil || !slices.Equal(res.Redump.Tables, []string{"app.big"}) {
		t.Fatalf("refresh: refused %v (%q), full backup %q, re-dump %+v, decisions %q", res.Refused, res.Reasons, res.FullBackup, res.Redump, res.Tables)
	}
	t.Logf("decisions: %q; re-dump %+v", res.Tables, res.Redump)
	if ids, err := snapshot.ListPartials(sourceDir); err != nil || len(ids) > 0 {
		t.Fatalf("partial snapshots left: %v (%v)", ids, err)
	}
	owners := workflowRuns(t, e, redumpID)
	afterKill(t, e, eng, sourceDir, append(owners, run.GetRunID()), res, checkWatch)
}

// waitRunning waits until workflow id has a running run and returns its
// run id.
func waitRunning(t *testing.T, e *backupEnv, id string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		desc, err := e.c.DescribeWorkflowExecution(e.ctx, id, "")
		if err == nil && desc.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s never ran", id)
	return ""
}

// describeRuns says, for a failure message, what the latest run of each
// workflow id is doing: its status, pending activities and children.
func describeRuns(t *testing.T, e *backupEnv, ids ...string) string {
	t.Helper()
	var b strings.Builder
	for _, id := range ids {
		desc, err := e.c.DescribeWorkflowExecution(e.ctx, id, "")
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", id, err)
			continue
		}
		fmt.Fprintf(&b, "%s run %s: %s\n", id, desc.GetWorkflowExecutionInfo().GetExecution().GetRunId(), desc.GetWorkflowExecutionInfo().GetStatus())
		for _, pa := range desc.GetPendingActivities() {
			fmt.Fprintf(&b, "  activity %s: %s attempt %d, last failure %v\n", pa.GetActivityType().GetName(), pa.GetState(), pa.GetAttempt(), pa.GetLastFailure().GetMessage())
		}
		for _, pc := range desc.GetPendingChildren() {
			fmt.Fprintf(&b, "  child %s run %s\n", pc.GetWorkflowId(), pc.GetRunId())
		}
	}
	return b.String()
}
