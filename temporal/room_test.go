package temporal

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/workers"
	"github.com/dbtrail/dbtrail/workflows"
)

// smallFolder is a backup folder whose free space the test sets: a real
// tmpfs of 128 MiB where the test may mount one (as root, in CI), filled
// with a ballast file; elsewhere a folder with a probe that reports what
// the test sets.
type smallFolder struct {
	dir      string
	tmpfs    bool
	fakeFree atomic.Uint64
}

func newSmallFolder(t *testing.T) *smallFolder {
	f := &smallFolder{dir: filepath.Join(t.TempDir(), "backups")}
	must(t, os.MkdirAll(f.dir, 0o755))
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=128m", "tmpfs", f.dir).CombinedOutput(); err == nil {
		f.tmpfs = true
		t.Cleanup(func() { exec.Command("umount", "-l", f.dir).Run() })
	} else {
		t.Logf("no tmpfs (%v: %s): free space comes from a fake probe", err, strings.TrimSpace(string(out)))
	}
	f.fakeFree.Store(1 << 40)
	return f
}

// probe is the probe activities measure the folder with.
func (f *smallFolder) probe() disk.Probe {
	if f.tmpfs {
		return disk.Free
	}
	return func(string) (uint64, error) { return f.fakeFree.Load(), nil }
}

// leave fills the folder until about free bytes are left (0: empties the
// ballast).
func (f *smallFolder) leave(t *testing.T, free uint64) {
	ballast := filepath.Join(f.dir, "ballast")
	must(t, os.RemoveAll(ballast))
	if !f.tmpfs {
		if free == 0 {
			free = 1 << 40
		}
		f.fakeFree.Store(free)
		return
	}
	if free == 0 {
		return
	}
	now, err := disk.Free(f.dir)
	must(t, err)
	if now > free {
		must(t, os.WriteFile(ballast, make([]byte, now-free), 0o644))
	}
}

// TestRefreshOnAFullFolder: a refresh whose table rewrite needs more room
// than the backup folder has fails at its first attempt, non-retryable
// NoRoom, saying what it needs, where, and what is free; current stays the
// full backup and no staging folder is left. With room back, the next
// refresh publishes and equals the live tables.
func TestRefreshOnAFullFolder(t *testing.T) {
	e := newBackupEnv(t, withoutWorker())
	small := newSmallFolder(t)
	e.acts.BackupDir, e.acts.Disk = small.dir, small.probe()
	w := worker.New(e.c, workflows.TaskQueue, workers.Options())
	workers.RegisterAll(w, e.acts)
	must(t, w.Start())
	t.Cleanup(w.Stop)

	_, err := e.src.ExecContext(e.ctx, "CREATE TABLE big (id INT PRIMARY KEY, v VARCHAR(300))")
	must(t, err)
	for i := 0; i < 4000; i += 500 {
		var vals []string
		for j := i; j < i+500; j++ {
			vals = append(vals, fmt.Sprintf("(%d, REPEAT('x', 250))", j))
		}
		_, err := e.src.ExecContext(e.ctx, "INSERT INTO big VALUES "+strings.Join(vals, ","))
		must(t, err)
	}
	full := e.fullBackup(t)
	_, err = e.src.ExecContext(e.ctx, "UPDATE big SET v = REPEAT('y', 250)")
	must(t, err)
	e.waitCaughtUp(t)

	small.leave(t, 32<<20) // less than the margin alone
	run, err := StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: workflows.RefreshWorkflowID("main"), TaskQueue: workflows.TaskQueue},
		workflows.Refresh, workflows.RefreshInput{Source: "main"})
	must(t, err)
	err = run.Get(e.ctx, nil)
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != activities.ErrNoRoom || !app.NonRetryable() {
		t.Fatalf("refresh on a full folder: %v; want a non-retryable %s", err, activities.ErrNoRoom)
	}
	for _, want := range []string{"app.big needs about ", " in " + filepath.Join(small.dir, "main") + " (", " free)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	notRetried(t, e, run)
	if cur := e.current(t); cur.Manifest.SnapshotID != full.SnapshotID {
		t.Fatalf("current is %s after the failed refresh, want the full backup %s", cur.Manifest.SnapshotID, full.SnapshotID)
	}
	if left, err := snapshot.Stagings(filepath.Join(small.dir, "main")); err != nil || len(left) != 0 {
		t.Errorf("staging folders left by the failed refresh: %+v %v", left, err)
	}

	small.leave(t, 0)
	res := e.refresh(t, workflows.RefreshInput{})
	if res.SnapshotID == "" {
		t.Fatalf("refresh with room back published nothing: %+v", res)
	}
	eng, done, err := moment.OpenScratch(e.ctx, t.TempDir(), "room-")
	must(t, err)
	defer done()
	checkLive(t, e, eng, e.current(t), "refresh with room back")
}
