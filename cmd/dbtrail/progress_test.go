package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdktestsuite "go.temporal.io/sdk/testsuite"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/shell"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/workers"
	"github.com/dbtrail/dbtrail/workflows"
)

// fakeRun is a workflow run that ends, with err, when release is closed.
type fakeRun struct {
	client.WorkflowRun
	release chan struct{}
	err     error
}

func (r *fakeRun) Get(ctx context.Context, _ any) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	select {
	case <-r.release:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *fakeRun) GetID() string    { return "fullbackup-main" }
func (r *fakeRun) GetRunID() string { return "run-1" }

// devLocation is where dbtrail dev's runs are followed.
func devLocation() runLocation {
	return runLocation{addr: "127.0.0.1:7233", namespace: "default", ui: "http://127.0.0.1:8233"}
}

// step is one progress reading of a scripted run, taken when the clock
// reads at since the wait began.
type step struct {
	at time.Duration
	p  progress
}

// waitScripted waits with w, under ctx, for a run that answers steps, one
// per tick, and then ends with runErr. The clock moves only as the steps
// say: nothing sleeps. It returns wait's error.
func waitScripted(ctx context.Context, w *waiter, steps []step, runErr error) error {
	start := time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	now := start
	w.now = func() time.Time { return now }
	ticks := make(chan time.Time, len(steps)+1)
	for range len(steps) + 1 {
		ticks <- start
	}
	w.ticks = func() (<-chan time.Time, func()) { return ticks, func() {} }
	run := &fakeRun{release: make(chan struct{}), err: runErr}
	i := 0
	read := func(context.Context) (progress, error) {
		if i == len(steps) {
			close(run.release)
			return progress{}, errors.New("the run is over")
		}
		s := steps[i]
		i++
		now = start.Add(s.at)
		return s.p, nil
	}
	return w.wait(ctx, "FullBackup", run, read, nil)
}

// backupAt is a FullBackup's progress in phase with done of total tables
// converted, 10 rows each.
func backupAt(phase string, done, total int) progress {
	return fullBackupProgress(payload.FullBackupProgress{Phase: phase, TablesDone: done, TablesTotal: total, Rows: int64(10 * done)})
}

// TestWaitPlainLinesWhenNotATerminal is the log of `dbtrail backup full >
// log`: no carriage returns, a line per phase change, and between them at
// most one per lineEvery (one per quietEvery when nothing changed).
func TestWaitPlainLinesWhenNotATerminal(t *testing.T) {
	var out strings.Builder
	w := newWaiter(&out, devLocation())
	steps := []step{
		{1 * time.Second, backupAt("allocating snapshot", 0, 0)},
		{2 * time.Second, backupAt("dumping", 0, 0)},
		{3 * time.Second, backupAt("dumping", 0, 0)},
		{13 * time.Second, backupAt("dumping", 0, 0)}, // unchanged: waits for quietEvery
		{14 * time.Second, backupAt("converting tables", 0, 3)},
		{15 * time.Second, backupAt("converting tables", 1, 3)},
		{20 * time.Second, backupAt("converting tables", 2, 3)},
		{24 * time.Second, backupAt("converting tables", 2, 3)}, // lineEvery after the last line
		{25 * time.Second, backupAt("converting tables", 3, 3)},
		{26 * time.Second, backupAt("publishing", 3, 3)},
		{85 * time.Second, backupAt("publishing", 3, 3)},
		{86 * time.Second, backupAt("publishing", 3, 3)}, // quietEvery after the last line
	}
	if err := waitScripted(context.Background(), w, steps, nil); err != nil {
		t.Fatal(err)
	}
	want := `[1s] 0/0 tables, 0 rows — allocating snapshot
[2s] 0/0 tables, 0 rows — dumping
[14s] 0/3 tables, 0 rows — converting tables
[24s] 2/3 tables, 20 rows — converting tables
[26s] 3/3 tables, 30 rows — publishing
[1m26s] 3/3 tables, 30 rows — publishing
`
	if got := out.String(); got != want {
		t.Fatalf("got:\n%q\nwant:\n%q", got, want)
	}
}

// TestWaitBarOnATerminal redraws one line in place, as the CLI always did,
// and ends it with a newline.
func TestWaitBarOnATerminal(t *testing.T) {
	var out strings.Builder
	w := newWaiter(&out, devLocation())
	w.terminal = true
	steps := []step{
		{1 * time.Second, backupAt("converting tables", 0, 3)},
		{2 * time.Second, backupAt("converting tables", 1, 3)},
	}
	if err := waitScripted(context.Background(), w, steps, nil); err != nil {
		t.Fatal(err)
	}
	want := "\r[..............................] 0/3 tables, 0 rows — " + fmt.Sprintf("%-45s", "converting tables") +
		"\r[##########....................] 1/3 tables, 10 rows — " + fmt.Sprintf("%-45s", "converting tables") + "\n"
	if got := out.String(); got != want {
		t.Fatalf("got:\n%q\nwant:\n%q", got, want)
	}
}

func TestIsTerminal(t *testing.T) {
	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer pw.Close()
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for name, w := range map[string]io.Writer{"pipe": pw, "file": f, "buffer": &strings.Builder{}} {
		if shell.IsTerminal(w) {
			t.Errorf("%s taken for a terminal", name)
		}
	}
}

// devFollow is what writeFollow writes for devLocation and fakeRun.
const devFollow = `  Temporal UI   http://127.0.0.1:8233/namespaces/default/workflows/fullbackup-main/run-1/history
  Temporal CLI  temporal workflow describe --address 127.0.0.1:7233 --namespace default --workflow-id fullbackup-main --run-id run-1
`

// TestWaitStopsSayingWhyAndWhereToFollow is Ctrl-C during a wait: the
// error says why the CLI stopped waiting, and the output where the run
// that goes on can be followed.
func TestWaitStopsSayingWhyAndWhereToFollow(t *testing.T) {
	var out strings.Builder
	w := newWaiter(&out, devLocation())
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupt signal received")) // as signal.NotifyContext does
	err := waitScripted(ctx, w, nil, nil)
	var stopped *stoppedWaitingError
	if !errors.As(err, &stopped) {
		t.Fatalf("got %v, want a *stoppedWaitingError", err)
	}
	if got, want := err.Error(), "stopped waiting for FullBackup fullbackup-main (interrupt signal received); the run goes on"; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	want := "FullBackup fullbackup-main (run run-1) keeps running; follow it with:\n" + devFollow +
		"  to cancel it  temporal workflow cancel --address 127.0.0.1:7233 --namespace default --workflow-id fullbackup-main --run-id run-1\n"
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}

func TestStopReason(t *testing.T) {
	deadline, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	<-deadline.Done()
	canceled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	for _, tc := range []struct {
		cause error
		want  string
	}{
		{context.Cause(deadline), "the wait timed out"},
		{context.Cause(canceled), "the wait was canceled"},
		{fmt.Errorf("read the result: %w", errors.New("connection refused")), "read the result: connection refused"},
	} {
		if got := stopReason(tc.cause); got != tc.want {
			t.Errorf("stopReason(%v) = %q, want %q", tc.cause, got, tc.want)
		}
	}
}

// TestWaitFailedRunNamesTheRootCause fails a FullBackup the way a bad dump
// does (ConvertTable's non-retryable BadInput error) in the SDK's test
// environment, whose error went through Temporal's failure conversion as a
// real run's does, and checks that the CLI's error is the root cause.
func TestWaitFailedRunNamesTheRootCause(t *testing.T) {
	const cause = "dump.t.00000.sql:12: table d.t: INSERT lists 37 columns, the table has 38"
	var s sdktestsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	opts := workers.Options()
	opts.DeadlockDetectionTimeout = time.Minute // a loaded machine is no deadlock
	env.SetWorkerOptions(opts)
	var acts *activities.Activities
	env.RegisterActivity(acts)
	env.OnActivity(acts.RemoveSnapshotStaging, mock.Anything, mock.Anything).Return(nil)
	env.OnActivity(acts.AllocateSnapshot, mock.Anything, mock.Anything).Return(calls.AllocateSnapshotResult{SnapshotID: "20261129T090000Z"}, nil)
	env.OnActivity(acts.Dump, mock.Anything, mock.Anything).Return(calls.DumpResult{Tables: []calls.TableRef{{Schema: "d", Table: "t"}}}, nil)
	env.OnActivity(acts.MapPosition, mock.Anything, mock.Anything).Return(calls.MapPositionResult{}, nil)
	env.OnActivity(acts.ExactFloats, mock.Anything, mock.Anything).Return(calls.ExactFloatsResult{Files: []string{""}}, nil)
	env.OnActivity(acts.ConvertTable, mock.Anything, mock.Anything).Return(calls.ConvertTableResult{},
		temporal.NewNonRetryableApplicationError(cause, payload.ErrBadInput, errors.New(cause)))
	env.ExecuteWorkflow(workflows.FullBackup, payload.FullBackupInput{Source: "main"})
	runErr := env.GetWorkflowError()
	if runErr == nil {
		t.Fatal("the workflow did not fail")
	}

	var out strings.Builder
	err := waitScripted(context.Background(), newWaiter(&out, devLocation()), nil, runErr)
	var failed *runFailedError
	if !errors.As(err, &failed) {
		t.Fatalf("got %v, want a *runFailedError", err)
	}
	if got, want := err.Error(), "FullBackup fullbackup-main failed: ConvertTable: "+cause; got != want {
		t.Errorf("error:\n%s\nwant:\n%s", got, want)
	}
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != payload.ErrBadInput {
		t.Errorf("the SDK's error is not kept: %v", err)
	}
	if got, want := out.String(), "FullBackup fullbackup-main (run run-1) did not complete; its history:\n"+devFollow; got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}

func TestTemporalFlagsLocation(t *testing.T) {
	for _, tc := range []struct {
		flags  temporalFlags
		wantUI string
	}{
		{temporalFlags{addr: "127.0.0.1:7233", namespace: "default"}, "http://127.0.0.1:8233"},
		{temporalFlags{addr: "temporal.internal:7233", namespace: "prod"}, ""},
		{temporalFlags{addr: "temporal.internal:7233", namespace: "prod", ui: "https://ui.internal/"}, "https://ui.internal"},
	} {
		if got := tc.flags.location(); got.ui != tc.wantUI || got.addr != tc.flags.addr || got.namespace != tc.flags.namespace {
			t.Errorf("%+v: location %+v, want UI %q", tc.flags, got, tc.wantUI)
		}
	}
}
