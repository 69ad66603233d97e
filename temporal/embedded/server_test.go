package embedded

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/common/config"
	serverlog "go.temporal.io/server/common/log"
	"go.temporal.io/server/common/metrics"
	"go.temporal.io/server/common/persistence/sql"
	"go.temporal.io/server/common/persistence/sql/sqlplugin"
	"go.temporal.io/server/common/resolver"

	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workers"
)

const testQueue = "dbtrail-test"

// testLogger shows warnings and errors in the test log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// startTest starts a server on free loopback ports in dir, a client and a
// worker with the Ping workflow and waitSignal; all stop at the test's end
// (or earlier through the returned stop).
func startTest(t *testing.T, dir string, ui bool) (srv *Server, c client.Client, stop func()) {
	t.Helper()
	cfg := ServerConfig{DataDir: dir, FrontendAddr: "127.0.0.1:0", Logger: testLogger(t)}
	if ui {
		cfg.UIAddr = "127.0.0.1:0"
	}
	return startConfig(t, cfg)
}

// startConfig is startTest with the server's config; the client dials as
// the server's Connection says.
func startConfig(t *testing.T, cfg ServerConfig) (srv *Server, c client.Client, stop func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	began := time.Now()
	srv, err := StartServer(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server started in %s (frontend %s, UI %q)", time.Since(began).Round(time.Millisecond), srv.FrontendAddr(), srv.UIURL())
	c, err = srv.Connection().Dial(ctx, testLogger(t))
	if err != nil {
		srv.Stop()
		t.Fatal(err)
	}
	w := worker.New(c, testQueue, worker.Options{})
	workers.Register(w)
	w.RegisterWorkflowWithOptions(waitSignal, workflow.RegisterOptions{Name: "waitSignal"})
	if err := w.Start(); err != nil {
		c.Close()
		srv.Stop()
		t.Fatal(err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			w.Stop()
			c.Close()
			srv.Stop()
		}
	}
	t.Cleanup(stop)
	return srv, c, stop
}

// waitSignal stays open until it receives signal "done".
func waitSignal(ctx workflow.Context) error {
	workflow.GetSignalChannel(ctx, "done").Receive(ctx, nil)
	return nil
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestServer covers the embedded server end to end: a workflow runs through
// a worker, a duplicate start is refused, schedules are idempotent, the UI
// answers, and history survives a restart on the same data folder.
func TestServer(t *testing.T) {
	dir := t.TempDir()
	srv, c, stop := startTest(t, dir, true)
	ctx := ctxT(t)

	t.Run("ping end to end", func(t *testing.T) {
		run, err := temporalclient.StartWorkflow(ctx, c, client.StartWorkflowOptions{ID: "ping-1", TaskQueue: testQueue}, "Ping", "hello")
		if err != nil {
			t.Fatal(err)
		}
		var out string
		if err := run.Get(ctx, &out); err != nil {
			t.Fatal(err)
		}
		if out != "pong: hello" {
			t.Fatalf("Ping = %q", out)
		}
	})

	t.Run("duplicate start while running", func(t *testing.T) {
		opts := client.StartWorkflowOptions{ID: "wait-1", TaskQueue: testQueue}
		run, err := temporalclient.StartWorkflow(ctx, c, opts, "waitSignal")
		if err != nil {
			t.Fatal(err)
		}
		_, err = temporalclient.StartWorkflow(ctx, c, opts, "waitSignal")
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		var running *temporalclient.AlreadyRunningError
		if !errors.Is(err, temporalclient.ErrAlreadyRunning) || !errors.As(err, &started) || !errors.As(err, &running) ||
			running.RunID != run.GetRunID() || !strings.Contains(err.Error(), "wait-1 is already running") {
			t.Fatalf("duplicate start: got %v", err)
		}
		t.Logf("duplicate start: %v", err)
		if err := c.SignalWorkflow(ctx, "wait-1", run.GetRunID(), "done", nil); err != nil {
			t.Fatal(err)
		}
		if err := run.Get(ctx, nil); err != nil {
			t.Fatal(err)
		}
		// Once closed, the ID may be used again.
		run2, err := temporalclient.StartWorkflow(ctx, c, client.StartWorkflowOptions{ID: "wait-1", TaskQueue: testQueue}, "Ping", "again")
		if err != nil {
			t.Fatalf("restart after close: %v", err)
		}
		if err := run2.Get(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := temporalclient.StartWorkflow(ctx, c, client.StartWorkflowOptions{TaskQueue: testQueue}, "Ping", "x"); err == nil {
			t.Fatal("start without ID: want an error")
		}
	})

	t.Run("schedule", func(t *testing.T) {
		spec := temporalclient.ScheduleSpec{ID: "ping-every", Every: time.Hour, Workflow: "Ping", TaskQueue: testQueue, Args: []any{"first"}}
		if err := temporalclient.EnsureSchedule(ctx, c, spec); err != nil {
			t.Fatal(err)
		}
		spec.Every, spec.Args = 2*time.Second, []any{"scheduled"}
		if err := temporalclient.EnsureSchedule(ctx, c, spec); err != nil {
			t.Fatal(err)
		}
		if n := countSchedules(t, ctx, c, "ping-every"); n != 1 {
			t.Fatalf("%d schedules named ping-every, want 1", n)
		}
		h := c.ScheduleClient().GetHandle(ctx, "ping-every")
		d, err := h.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Schedule.Policy.Overlap; got != enumspb.SCHEDULE_OVERLAP_POLICY_SKIP {
			t.Fatalf("overlap policy %s, want SKIP", got)
		}
		if got := d.Schedule.Spec.Intervals[0].Every; got != 2*time.Second {
			t.Fatalf("interval %s after update, want 2s", got)
		}
		// The update took: a run starts within a few intervals and answers
		// with the updated argument.
		for len(d.Info.RecentActions) == 0 {
			if ctx.Err() != nil {
				t.Fatal("schedule started no run")
			}
			time.Sleep(200 * time.Millisecond)
			if d, err = h.Describe(ctx); err != nil {
				t.Fatal(err)
			}
		}
		a := d.Info.RecentActions[0].StartWorkflowResult
		if !strings.HasPrefix(a.WorkflowID, "ping-every") {
			t.Fatalf("scheduled workflow ID %q", a.WorkflowID)
		}
		var out string
		if err := c.GetWorkflow(ctx, a.WorkflowID, a.FirstExecutionRunID).Get(ctx, &out); err != nil {
			t.Fatal(err)
		}
		if out != "pong: scheduled" {
			t.Fatalf("scheduled Ping = %q", out)
		}
		if err := temporalclient.DeleteSchedule(ctx, c, "ping-every"); err != nil {
			t.Fatal(err)
		}
		if err := temporalclient.DeleteSchedule(ctx, c, "ping-every"); err != nil {
			t.Fatalf("deleting a missing schedule: %v", err)
		}
	})

	t.Run("UI", func(t *testing.T) {
		resp, err := http.Get(srv.UIURL() + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(strings.ToLower(string(body)), "<html") {
			t.Fatalf("GET / = %s, %d bytes", resp.Status, len(body))
		}
	})

	t.Run("second server on the same folder is refused", func(t *testing.T) {
		_, err := StartServer(ctx, ServerConfig{DataDir: dir, FrontendAddr: "127.0.0.1:0"})
		if err == nil || !strings.Contains(err.Error(), "in use") {
			t.Fatalf("got %v", err)
		}
	})

	stop()
	_, c2, _ := startTest(t, dir, false)
	d, err := c2.DescribeWorkflowExecution(ctx, "ping-1", "")
	if err != nil {
		t.Fatalf("ping-1 after restart: %v", err)
	}
	if s := d.WorkflowExecutionInfo.Status; s != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		t.Fatalf("ping-1 after restart: status %s", s)
	}
	var out string
	if err := c2.GetWorkflow(ctx, "ping-1", "").Get(ctx, &out); err != nil || out != "pong: hello" {
		t.Fatalf("ping-1 result after restart: %q, %v", out, err)
	}
	// The restarted server still runs workflows.
	run, err := temporalclient.StartWorkflow(ctx, c2, client.StartWorkflowOptions{ID: "ping-2", TaskQueue: testQueue}, "Ping", "again")
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, &out); err != nil || out != "pong: again" {
		t.Fatalf("ping-2: %q, %v", out, err)
	}
}

func countSchedules(t *testing.T, ctx context.Context, c client.Client, id string) int {
	t.Helper()
	// Schedules reach the list through visibility, which lags a little.
	var n int
	for range 50 {
		it, err := c.ScheduleClient().List(ctx, client.ScheduleListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n = 0
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			if e.ID == id {
				n++
			}
		}
		if n > 0 {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
	return n
}

// TestSchema checks that the schema step is idempotent, upgrades an older
// database and refuses a database of unknown version.
func TestSchema(t *testing.T) {
	dir := t.TempDir()
	cfg := sqliteConfig(filepath.Join(dir, DBFile))
	for i := range 2 {
		if err := ensureSchema(cfg); err != nil {
			t.Fatalf("ensureSchema #%d: %v", i+1, err)
		}
	}
	// Pretend the database is at 0.10: drop the 0.11 table and set the version.
	execSQL(t, cfg, "DROP TABLE current_chasm_executions")
	execSQL(t, cfg, "UPDATE schema_version SET curr_version = '0.10'")
	if err := ensureSchema(cfg); err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	execSQL(t, cfg, "SELECT count(*) FROM current_chasm_executions")
	if v := schemaVersion(t, cfg); v != "0.11" {
		t.Fatalf("version after upgrade %q", v)
	}
	execSQL(t, cfg, "UPDATE schema_version SET curr_version = '0.99'")
	if err := ensureSchema(cfg); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("newer schema: got %v", err)
	}
	execSQL(t, cfg, "DROP TABLE schema_version")
	if err := ensureSchema(cfg); err == nil || !strings.Contains(err.Error(), "unknown version") {
		t.Fatalf("unversioned schema: got %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, DBFile)); err != nil {
		t.Fatal(err)
	}
}

func adminDB(t *testing.T, cfg *config.SQL) sqlplugin.AdminDB {
	t.Helper()
	db, err := sql.NewSQLAdminDB(sqlplugin.DbKindUnknown, cfg, resolver.NewNoopResolver(), serverlog.NewNoopLogger(), metrics.NoopMetricsHandler)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func execSQL(t *testing.T, cfg *config.SQL, stmt string) {
	t.Helper()
	db := adminDB(t, cfg)
	defer db.Close()
	if err := db.Exec(stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

func schemaVersion(t *testing.T, cfg *config.SQL) string {
	t.Helper()
	db := adminDB(t, cfg)
	defer db.Close()
	v, err := db.ReadSchemaVersion(schemaDBName)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
