package e2e

import (
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workers"
	"github.com/dbtrail/dbtrail/workflows"
)

// leaveCounting is leave for a test that frees room by removing files:
// on a tmpfs the ballast leaves about free bytes; with the fake probe the
// folder becomes one of its present use plus free, whose free space grows
// by what is removed from it.
func (f *smallFolder) leaveCounting(t *testing.T, free uint64) {
	f.leave(t, free)
	if f.tmpfs {
		return
	}
	used, err := usedBytes(f.dir)
	must(t, err)
	f.fakeSize.Store(used + free)
}

// usedBytes is the size of the regular files under dir, each file (inode)
// once however many hard links name it.
func usedBytes(dir string) (uint64, error) {
	seen := map[uint64]bool{}
	var n uint64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil // removed while walked: it takes no room
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			if seen[st.Ino] {
				return nil
			}
			seen[st.Ino] = true
		}
		n += uint64(fi.Size())
		return nil
	})
	return n, err
}

// TestRetentionBeforeARefreshOnAFullFolder: the backup folder (a real
// tmpfs where one can be mounted) has less free space than a refresh
// needs, and an older snapshot retention would remove holds more than the
// difference. With a worker's retention that keeps every snapshot, the refresh
// fails at once, non-retryable NoRoom with the needs/free message, current
// intact and no staging left. With one that keeps only the current
// snapshot, the refresh runs that retention first, logs what it removed,
// and publishes a snapshot equal to the live table.
func TestRetentionBeforeARefreshOnAFullFolder(t *testing.T) {
	e := newBackupEnv(t, withoutWorker())
	small := newSmallFolder(t)
	logs := &lockedBuffer{}
	e.acts.BackupDir, e.acts.Disk = small.dir, small.probe()
	e.acts.Log = slog.New(slog.NewTextHandler(io.MultiWriter(logs, testWriter{t}), &slog.HandlerOptions{Level: slog.LevelInfo}))
	w := worker.New(e.c, payload.TaskQueue, workers.Options())
	workers.RegisterAll(w, e.acts)
	must(t, w.Start())
	t.Cleanup(w.Stop)

	// About 5 MiB of table file that does not compress: each full backup
	// writes its own.
	_, err := e.src.ExecContext(e.ctx, "CREATE TABLE rnd (id INT PRIMARY KEY, v VARCHAR(300))")
	must(t, err)
	_, err = e.src.ExecContext(e.ctx, "INSERT INTO rnd SELECT seq, CONCAT(SHA2(RAND(), 512), SHA2(RAND(), 512)) FROM seq_1_to_40000")
	must(t, err)
	old := e.fullBackup(t)
	cur := e.fullBackup(t)
	dir := filepath.Join(small.dir, "main")
	oldSnap, err := snapshot.OpenSnapshot(filepath.Join(dir, snapshot.SnapshotsDir, old.SnapshotID))
	must(t, err)
	var oldBytes uint64
	for _, d := range oldSnap.Manifest.Files {
		oldBytes += uint64(d.Size)
	}
	t.Logf("the older snapshot %s holds %s", old.SnapshotID, disk.Bytes(oldBytes))
	if oldBytes < 4<<20 {
		t.Fatalf("the older snapshot holds %s: too little for the test", disk.Bytes(oldBytes))
	}
	_, err = e.src.ExecContext(e.ctx, "UPDATE rnd SET v = 'changed' WHERE id <= 10")
	must(t, err)
	e.waitCaughtUp(t)

	// A pair of 10 changes is estimated at spaceneed.Floor: half of it is
	// short, and the older snapshot frees 4 MiB or more.
	small.leaveCounting(t, spaceneed.Floor/2)
	e.acts.Retention = retention.Policy{KeepSnapshots: 10} // the worker's policy
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.RefreshWorkflowID("main"), TaskQueue: payload.TaskQueue},
		workflows.Refresh, payload.RefreshInput{Source: "main", TableDeltas: true})
	must(t, err)
	err = run.Get(e.ctx, nil)
	noSpace(t, err, "refresh whose retention frees nothing", "pair app.rnd needs about ", " in "+dir+" (", " free)")
	notRetried(t, e, run)
	if got := e.current(t).Manifest.SnapshotID; got != cur.SnapshotID {
		t.Fatalf("current is %s after the refused refresh, want %s", got, cur.SnapshotID)
	}
	if left, err := snapshot.Stagings(dir); err != nil || len(left) != 0 {
		t.Errorf("staging folders left by the refused refresh: %+v %v", left, err)
	}
	if ids, err := snapshot.ListSnapshots(dir); err != nil || !slices.Contains(ids, old.SnapshotID) {
		t.Fatalf("snapshots %v (%v) after the refused refresh: want %s still there", ids, err, old.SnapshotID)
	}

	small.leaveCounting(t, spaceneed.Floor/2)
	e.acts.Retention = retention.Policy{KeepSnapshots: 1}
	res := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	if res.SnapshotID == "" {
		t.Fatalf("refresh after retention published nothing: %+v", res)
	}
	if ids, err := snapshot.ListSnapshots(dir); err != nil || slices.Contains(ids, old.SnapshotID) {
		t.Fatalf("snapshots %v (%v): want %s removed by the retention before the refresh", ids, err, old.SnapshotID)
	}
	var said bool
	for _, line := range strings.Split(logs.String(), "\n") {
		said = said || strings.Contains(line, "retention ran before the refresh to make room") && strings.Contains(line, old.SnapshotID)
	}
	if !said {
		t.Errorf("no log line says retention removed %s before the refresh", old.SnapshotID)
	}
	eng, done, err := moment.OpenScratch(e.ctx, t.TempDir(), "room-")
	must(t, err)
	defer done()
	checkLive(t, e, eng, e.current(t), "refresh after retention")
}

// testWriter writes each log record to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
