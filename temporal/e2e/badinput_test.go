package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workers"
	"github.com/dbtrail/dbtrail/workflows"
)

// TestFullBackupBadInputFailsAtOnce: a dump whose data file does not fit its
// table (real mydumper output, its column list altered afterwards by a wrapper, an error that was retried forever before) fails
// the FullBackup at its first attempt, non-retryable, with an error naming
// the file, the line and the table, instead of retrying forever; it leaves
// no staging folder or dump behind, and the staging folder of a run that no
// longer runs is swept, while that of a run still running is kept.
func TestFullBackupBadInputFailsAtOnce(t *testing.T) {
	e := newBackupEnv(t, withoutWorker())
	for _, q := range []string{
		"CREATE TABLE bad (id INT PRIMARY KEY, name VARCHAR(10))",
		"INSERT INTO bad VALUES (1, 'a'), (2, 'b'), (3, 'c')",
	} {
		_, err := e.src.ExecContext(e.ctx, q)
		must(t, err)
	}
	wrapper := filepath.Join(t.TempDir(), "mydumper")
	script := "#!/bin/sh\nmydumper \"$@\" || exit $?\n" +
		"while [ $# -gt 0 ]; do [ \"$1\" = --outputdir ] && dir=$2; shift; done\n" +
		"find \"$dir\" -name 'app.bad*.sql' ! -name '*-schema*' -exec sed -i 's/`name`/`nome`/' {} +\n"
	must(t, os.WriteFile(wrapper, []byte(script), 0o755))
	e.acts.Mydumper = wrapper
	e.acts.Runs = temporalclient.Runs{Client: e.c}
	// A staging folder a killed run left (its run is unknown to Temporal)
	// and one from before owners were recorded.
	staging := filepath.Join(e.acts.BackupDir, "main", snapshot.StagingDir)
	must(t, os.MkdirAll(filepath.Join(staging, "20200101T000000Z"), 0o755))
	must(t, snapshot.WriteStagingOwner(filepath.Join(e.acts.BackupDir, "main"), "20200101T000000Z", snapshot.Owner{WorkflowID: "fullbackup-main", RunID: "0b9f4a8e-0000-4000-8000-000000000000"}))
	must(t, os.MkdirAll(filepath.Join(staging, "20200101T000001Z"), 0o755))
	// And one whose run still runs (a run no worker serves stays running).
	idle, err := e.c.ExecuteWorkflow(e.ctx, client.StartWorkflowOptions{ID: "idle-owner", TaskQueue: "nobody-serves"}, "Idle")
	must(t, err)
	t.Cleanup(func() { e.c.TerminateWorkflow(context.Background(), idle.GetID(), idle.GetRunID(), "test over") })
	must(t, os.MkdirAll(filepath.Join(staging, "20200101T000002Z"), 0o755))
	must(t, snapshot.WriteStagingOwner(filepath.Join(e.acts.BackupDir, "main"), "20200101T000002Z", snapshot.Owner{WorkflowID: idle.GetID(), RunID: idle.GetRunID()}))
	w := worker.New(e.c, payload.TaskQueue, workers.Options())
	workers.RegisterAll(w, e.acts)
	must(t, w.Start())
	t.Cleanup(w.Stop)

	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.FullBackupWorkflowID("main"), TaskQueue: payload.TaskQueue},
		workflows.FullBackup, payload.FullBackupInput{Source: "main"})
	must(t, err)
	err = run.Get(e.ctx, nil)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != payload.ErrBadInput || app.NonRetryable() != true {
		t.Fatalf("FullBackup error %v, want a non-retryable %s", err, payload.ErrBadInput)
	}
	for _, want := range []string{"app.bad.", ".sql:", "table app.bad"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	notRetried(t, e, run)
	// No litter: the failed run removed its staging folder and dump; the
	// orphan was swept when the run allocated its snapshot; the folder
	// without an owner and the one whose run still runs are kept.
	left, err := snapshot.Stagings(filepath.Join(e.acts.BackupDir, "main"))
	must(t, err)
	var ids []string
	for _, s := range left {
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, " ") != "20200101T000001Z 20200101T000002Z" {
		t.Errorf("staging folders left: %v; want only the one without an owner and the running run's", ids)
	}
	if dumps, _ := filepath.Glob(filepath.Join(e.acts.WorkDir, "*", "*")); len(dumps) != 0 {
		t.Errorf("the failed run left %v in the work folder", dumps)
	}
	desc, err := e.c.DescribeWorkflowExecution(e.ctx, run.GetID(), run.GetRunID())
	must(t, err)
	if n := len(desc.PendingActivities); n != 0 {
		t.Errorf("%d activities still pending", n)
	}
}

// notRetried requires every activity of run to have ended at its first
// attempt (the history records the attempt each one last started with):
// how a test proves "failed at once", never by a clock. A retried one is
// named with the failure of the attempt before it.
func notRetried(t *testing.T, e *backupEnv, run client.WorkflowRun) {
	t.Helper()
	iter := e.c.GetWorkflowHistory(e.ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	scheduled := map[int64]string{} // scheduled event id → activity type
	for iter.HasNext() {
		ev, err := iter.Next()
		must(t, err)
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled[ev.GetEventId()] = a.GetActivityType().GetName()
		}
		a := ev.GetActivityTaskStartedEventAttributes()
		if a == nil || a.GetAttempt() == 1 {
			continue
		}
		t.Errorf("activity %s ran attempt %d (event %d): it was retried; the attempt before it failed with: %v",
			scheduled[a.GetScheduledEventId()], a.GetAttempt(), ev.GetEventId(), a.GetLastFailure())
	}
}
