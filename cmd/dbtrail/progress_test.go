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

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/workflows"
)

// fakeRun is a workflow run that ends, with err, when release is closed.
type fakeRun struct {
	client.WorkflowRun
	release chan struct{}
	err     error
}

func (r *fakeRun) Get(ctx context.Context, _ any) error {
	select {
	case <-r.release:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *fakeRun) GetID() string    { return "backup-main" }
func (r *fakeRun) GetRunID() string { return "run-1" }

// step is one progress reading of a scripted run, taken when the clock
// reads at since the wait began.
type step struct {
	at time.Duration
	p  progress
}

// waitScripted waits with w for a run that answers steps, one per tick, and
// then ends with runErr. The clock moves only as the steps say: nothing
// sleeps. It returns wait's error.
func waitScripted(w *waiter, steps []step, runErr error) error {
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
	return w.wait(context.Background(), run, read, nil)
}

// backupAt is a FullBackup's progress in phase with done of total tables
// converted, 10 rows each.
func backupAt(phase string, done, total int) progress {
	return fullBackupProgress(workflows.FullBackupProgress{Phase: phase, TablesDone: done, TablesTotal: total, Rows: int64(10 * done)})
}

// TestWaitPlainLinesWhenNotATerminal is the log of `dbtrail backup full >
// log`: no carriage returns, a line per phase change, and between them at
// most one per lineEvery (one per quietEvery when nothing changed).
func TestWaitPlainLinesWhenNotATerminal(t *testing.T) {
	var out strings.Builder
	w := newWaiter(&out)
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
	if err := waitScripted(w, steps, nil); err != nil {
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
	w := newWaiter(&out)
	w.terminal = true
	steps := []step{
		{1 * time.Second, backupAt("converting tables", 0, 3)},
		{2 * time.Second, backupAt("converting tables", 1, 3)},
	}
	if err := waitScripted(w, steps, nil); err != nil {
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
		if isTerminal(w) {
			t.Errorf("%s taken for a terminal", name)
		}
	}
}
