package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workflows"
)

// workerProc is a `dbtrail worker` process.
type workerProc struct {
	cmd *exec.Cmd
	out *lockedBuffer
}

// lockedBuffer collects a process's output for failure messages.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	if len(s) > 4000 {
		s = "…" + s[len(s)-4000:]
	}
	return s
}

// buildDbtrail returns the dbtrail binary, built once for the package's
// tests (see packageShared).
func buildDbtrail(t *testing.T) string {
	t.Helper()
	bin, err := shared.dbtrail()
	must(t, err)
	return bin
}

func startWorkerProc(t *testing.T, bin, frontend string, e *backupEnv, indexDSN string) *workerProc {
	t.Helper()
	return startWorkerCmd(t, bin, frontend, e, indexDSN, "--backup-dir", e.acts.BackupDir, "--work-dir", e.acts.WorkDir)
}

// startWorkerCmd starts `dbtrail worker` for the env's source with the
// folder (and other) flags of args.
func startWorkerCmd(t *testing.T, bin, frontend string, e *backupEnv, indexDSN string, args ...string) *workerProc {
	t.Helper()
	p := &workerProc{out: &lockedBuffer{}}
	p.cmd = exec.Command(bin, append([]string{"worker", "--temporal-addr", frontend, "--source", "main", "--refresh-every", "0"}, args...)...)
	p.cmd.Env = append(os.Environ(), "DBTRAIL_SOURCE_DSN="+e.source.DSN(""), "DBTRAIL_INDEX_DSN="+indexDSN)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	must(t, p.cmd.Start())
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	return p
}

// TestFullBackupSurvivesWorkerKill kills the worker process with SIGKILL
// while it converts tables; after a new worker starts, the workflow
// completes, the snapshot equals the live tables and an uninterrupted
// backup, and `current` never names an incomplete snapshot.
func TestFullBackupSurvivesWorkerKill(t *testing.T) {
	t.Parallel() // a waiting test: see TestMain
	bin := buildDbtrail(t)
	e := newBackupEnv(t, withoutWorker())
	for _, q := range []string{
		`CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(60), n BIGINT, d DECIMAL(12,3))`,
		`INSERT INTO big SELECT seq, CONCAT('row-', seq, REPEAT('x', seq % 40)), seq * 7, seq / 3 FROM seq_1_to_1000000`,
		`CREATE TABLE small (k VARCHAR(10) PRIMARY KEY, v INT)`,
		`INSERT INTO small VALUES ('a', 1), ('b', 2)`,
	} {
		_, err := e.src.ExecContext(e.ctx, q)
		must(t, err)
	}
	sourceDir := filepath.Join(e.acts.BackupDir, "main")

	// Watch current: every snapshot it ever names must be complete.
	checkWatch := watchCurrent(t, sourceDir)
	defer checkWatch()

	w1 := startWorkerProc(t, bin, e.frontend, e, e.indexDSN)
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.FullBackupWorkflowID("main"), TaskQueue: payload.TaskQueue},
		workflows.FullBackup, payload.FullBackupInput{Source: "main"})
	must(t, err)
	waitPhase(t, e, run, "converting tables", w1)
	waitConverting(t, e, run, "app.big")
	must(t, w1.cmd.Process.Signal(syscall.SIGKILL))
	w1.cmd.Wait()
	t.Logf("worker killed while converting")
	if _, err := os.Stat(filepath.Join(sourceDir, snapshot.CurrentLink)); err == nil {
		t.Fatal("current exists before the backup finished")
	}
	startWorkerProc(t, bin, e.frontend, e, e.indexDSN)
	var res workflows.FullBackupResult
	if err := run.Get(e.ctx, &res); err != nil {
		t.Fatalf("FullBackup after the kill: %v", err)
	}
	if err := checkWatch(); err != nil {
		t.Fatalf("current named an incomplete snapshot: %v", err)
	}
	snap, err := snapshot.OpenCurrent(sourceDir)
	must(t, err)
	must(t, snap.VerifyAll())
	compareTable(t, e, snap, "big")
	compareTable(t, e, snap, "small")

	again := e.fullBackup(t)
	snap2, err := snapshot.OpenCurrent(sourceDir)
	must(t, err)
	if again.SnapshotID == res.SnapshotID {
		t.Fatal("the second backup reused the snapshot id")
	}
	for _, tb := range snap.Manifest.Tables {
		t2, ok := snap2.Manifest.Table(tb.Schema, tb.Table)
		if !ok || t2.Fingerprint != tb.Fingerprint || t2.Rows != tb.Rows {
			t.Fatalf("%s.%s: interrupted backup %v/%d, uninterrupted %v/%d", tb.Schema, tb.Table, tb.Fingerprint, tb.Rows, t2.Fingerprint, t2.Rows)
		}
	}
}

// waitConverting waits until ConvertTable of table reports rows written and
// not done in its heartbeat: the worker is then in the middle of writing
// the table file, whatever the machine's speed.
func waitConverting(t *testing.T, e *backupEnv, run client.WorkflowRun, table string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		desc, err := e.c.DescribeWorkflowExecution(e.ctx, run.GetID(), run.GetRunID())
		must(t, err)
		for _, pa := range desc.PendingActivities {
			if pa.GetActivityType().GetName() != "ConvertTable" || pa.GetHeartbeatDetails() == nil {
				continue
			}
			var p calls.ConvertProgress
			if err := converter.GetDefaultDataConverter().FromPayloads(pa.GetHeartbeatDetails(), &p); err == nil &&
				p.Table == table && p.Rows > 0 && !p.Done {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("ConvertTable of %s never reported progress", table)
}

// waitPhase waits until the workflow's progress query reports phase.
func waitPhase(t *testing.T, e *backupEnv, run client.WorkflowRun, phase string, w *workerProc) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	last := "none"
	for time.Now().Before(deadline) {
		v, err := e.c.QueryWorkflow(e.ctx, run.GetID(), run.GetRunID(), payload.ProgressQuery)
		if err == nil {
			var p payload.FullBackupProgress
			if v.Get(&p) == nil {
				if p.Phase == phase {
					return
				}
				last = p.Phase
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	n, _ := e.store.CountEvents(e.ctx, "main")
	t.Fatalf("workflow never reached phase %q (last %q, %d events indexed); worker output:\n%s", phase, last, n, w.out.String())
}
