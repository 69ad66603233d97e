package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/flock"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/jobs"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/workflows"
)

// cliRun is a `dbtrail refresh` running in the background: its stderr
// lines arrive on lines, its stdout and end on done.
type cliRun struct {
	lines  chan string
	stdout strings.Builder
	done   chan error
}

func startRefreshCLI(t *testing.T, e *backupEnv, bin string, args ...string) *cliRun {
	cmd := exec.CommandContext(e.ctx, bin, append([]string{"refresh", "--temporal-addr", e.frontend, "--source", "main"}, args...)...)
	cmd.Env = append(os.Environ(), "DBTRAIL_INDEX_DSN="+e.indexDSN)
	r := &cliRun{lines: make(chan string, 1000), done: make(chan error, 1)}
	stderr, err := cmd.StderrPipe()
	must(t, err)
	cmd.Stdout = &r.stdout
	must(t, cmd.Start())
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
		r.done <- cmd.Wait()
	}()
	return r
}

// waitLine returns the first stderr line of r that says want.
func (r *cliRun) waitLine(t *testing.T, want string) string {
	t.Helper()
	for line := range r.lines {
		t.Logf("dbtrail refresh: %s", line)
		if strings.Contains(line, want) {
			return line
		}
	}
	t.Fatalf("dbtrail refresh ended without saying %q", want)
	return ""
}

// wait drains r's lines and returns its stdout once it ended well.
func (r *cliRun) wait(t *testing.T) string {
	t.Helper()
	var rest []string
	for line := range r.lines {
		rest = append(rest, line)
	}
	if err := <-r.done; err != nil {
		t.Fatalf("dbtrail refresh: %v\n%s\n%s", err, strings.Join(rest, "\n"), r.stdout.String())
	}
	t.Logf("dbtrail refresh, last lines: %s", strings.Join(rest, " | "))
	return r.stdout.String()
}

// TestRefreshFollowsTheRunningOne: `dbtrail refresh` while a refresh of
// the source runs (started by the API's job service, held at its publish
// by the test) is not refused: it says it follows that run, which one and
// who started it, and prints its result. `--new` follows it too, then
// starts one more after it, which publishes the change made meanwhile.
func TestRefreshFollowsTheRunningOne(t *testing.T) {
	e := newBackupEnv(t)
	bin := buildDbtrailAsync(t)
	_, err := e.src.ExecContext(e.ctx, "CREATE TABLE f (id INT PRIMARY KEY, v INT)")
	must(t, err)
	_, err = e.src.ExecContext(e.ctx, "INSERT INTO f VALUES (1, 1), (2, 2)")
	must(t, err)
	e.fullBackup(t)
	_, err = e.src.ExecContext(e.ctx, "UPDATE f SET v = 3 WHERE id = 1")
	must(t, err)
	e.waitCaughtUp(t)

	unlock, err := flock.TryLock(filepath.Join(e.acts.BackupDir, "main", snapshot.PublishLockName))
	must(t, err)
	var once sync.Once
	release := func() { once.Do(unlock) }
	t.Cleanup(release)
	guard := time.AfterFunc(5*time.Minute, release) // against a wait forever, not a bound on time
	defer guard.Stop()

	svc := jobs.New(jobs.Config{Client: e.c, TaskQueue: payload.TaskQueue, Origin: jobs.StartedByAPI})
	first, err := svc.Start(e.ctx, jobs.Request{Kind: jobs.Refresh, Source: "main", Label: "first", Input: payload.RefreshInput{Source: "main", TableDeltas: true}})
	must(t, err)

	follow := startRefreshCLI(t, e, bin())
	follow.waitLine(t, "following job main:first (run "+first.RunID+", started by api)")
	queued := startRefreshCLI(t, e, bin(), "--new")
	queued.waitLine(t, "following job main:first (run "+first.RunID+", started by api); --new: one more starts after it")

	_, err = e.src.ExecContext(e.ctx, "UPDATE f SET v = 4 WHERE id = 2")
	must(t, err)
	e.waitCaughtUp(t)
	release()

	out := follow.wait(t)
	j, err := svc.Get(e.ctx, first.ID)
	must(t, err)
	var res workflows.RefreshResult
	must(t, json.Unmarshal(j.Result, &res))
	if res.SnapshotID == "" || !strings.Contains(out, "snapshot "+res.SnapshotID+" published") {
		t.Fatalf("the following CLI printed %q; the followed run's result is %+v", out, res)
	}
	queued.waitLine(t, "Refresh job main:refresh-")
	out2 := queued.wait(t)
	if strings.Contains(out2, res.SnapshotID+" published") || !strings.Contains(out2, "published from "+res.SnapshotID) {
		t.Fatalf("the queued refresh printed %q; want a snapshot after %s", out2, res.SnapshotID)
	}
}
