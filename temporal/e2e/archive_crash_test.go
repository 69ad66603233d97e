package e2e

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workers"
	"github.com/dbtrail/dbtrail/workflows"
)

// The worker process of TestArchiveSurvivesWorkerKills is this test binary
// run as TestHelperArchiveWorker with its configuration in the environment:
// `dbtrail worker` gets its archive location (--archive-url) elsewhere.
const helperWorkerEnv = "DBTRAIL_TEST_ARCHIVE_WORKER"

// TestHelperArchiveWorker is not a test: run by the kill test as a child
// process (helperWorkerEnv set), it is a worker with an archive location
// that logs every archive step, until it is killed.
func TestHelperArchiveWorker(t *testing.T) {
	if os.Getenv(helperWorkerEnv) == "" {
		t.Skip("only a worker process of TestArchiveSurvivesWorkerKills")
	}
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	store, err := index.Open(ctx, os.Getenv("DBTRAIL_INDEX_DSN"))
	must(t, err)
	remote, err := storage.Open(ctx, os.Getenv("DBTRAIL_ARCHIVE_URL"), storage.Options{})
	must(t, err)
	c, err := temporalclient.Dial(ctx, os.Getenv("DBTRAIL_TEMPORAL_ADDR"), temporalclient.DefaultNamespace,
		slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	must(t, err)
	acts := &activities.Activities{
		Sources:   map[string]activities.Source{"main": {Name: "main", DSN: os.Getenv("DBTRAIL_SOURCE_DSN")}},
		Index:     store,
		BackupDir: os.Getenv("DBTRAIL_BACKUP_DIR"),
		WorkDir:   os.Getenv("DBTRAIL_WORK_DIR"),
		Remote:    remote,
		Log:       log,
	}
	w := worker.New(c, payload.TaskQueue, workers.Options())
	workers.RegisterAll(w, acts)
	must(t, w.Start())
	log.Info("helper worker started")
	select {}
}

// startArchiveWorker starts a helper worker process. With
// DBTRAIL_DEBUG_WORKER_LOGS=<folder> each worker's output is also kept in
// a file there.
func startArchiveWorker(t *testing.T, e *archiveEnv) *workerProc {
	t.Helper()
	p := &workerProc{out: &lockedBuffer{}}
	p.cmd = exec.Command(os.Args[0], "-test.run=^TestHelperArchiveWorker$", "-test.timeout=30m")
	p.cmd.Env = append(os.Environ(), helperWorkerEnv+"=1", "DBTRAIL_INDEX_DSN="+e.indexDSN, "DBTRAIL_ARCHIVE_URL="+e.url,
		"DBTRAIL_TEMPORAL_ADDR="+e.frontend, "DBTRAIL_SOURCE_DSN="+e.source.DSN(""),
		"DBTRAIL_BACKUP_DIR="+e.acts.BackupDir, "DBTRAIL_WORK_DIR="+e.acts.WorkDir)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if dir := os.Getenv("DBTRAIL_DEBUG_WORKER_LOGS"); dir != "" {
		f, err := os.CreateTemp(dir, "worker-*.log")
		must(t, err)
		p.cmd.Stdout, p.cmd.Stderr = io.MultiWriter(p.out, f), io.MultiWriter(p.out, f)
	}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	must(t, p.cmd.Start())
	t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() })
	return p
}

// stepLine matches an archive step in a helper worker's log.
var stepLine = regexp.MustCompile(`msg="archive step".* hour=(\S+) step=(\w+)`)

// steps returns the archive steps a worker logged, in order, each as
// hour and step.
func (p *workerProc) steps() [][2]string {
	var out [][2]string
	for _, m := range stepLine.FindAllStringSubmatch(p.out.all(), -1) {
		out = append(out, [2]string{m[1], m[2]})
	}
	return out
}

// all returns everything written so far.
func (b *lockedBuffer) all() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runWait waits for a run in the background.
type runWait struct {
	done chan struct{}
	err  error
}

func waitFor(ctx context.Context, run client.WorkflowRun) *runWait {
	w := &runWait{done: make(chan struct{})}
	go func() {
		w.err = run.Get(ctx, nil)
		close(w.done)
	}()
	return w
}

// TestArchiveSurvivesWorkerKills kills the worker process (SIGKILL) at
// least 12 times, each time as soon as it logs the next step of the cycle
// write, record, upload, confirm, drop of an hour; a new worker takes over
// after each kill. After every kill no hour has left the index without a
// confirmed archive file in the store; at the end every captured event is
// in the archive files or the index exactly once, and no old hour is left
// in the index.
func TestArchiveSurvivesWorkerKills(t *testing.T) {
	t.Parallel() // a waiting test: see TestMain
	const wantKills = 12
	e := newArchiveEnv(t, withoutWorker())
	base := time.Now().UTC().Truncate(time.Hour).Add(-60 * time.Hour)
	must(t, e.store.SplitPartitions(e.ctx, change.HourID(base)))
	w := newWorkload(51)
	bulkHours(t, e, w, base, 0, 6, 30000)
	hours := 6
	orig := indexEvents(t, e.ctx, e.store, "main")

	targets := []string{"write", "record", "upload", "confirm", "drop"}
	killedAt := map[string]int{}
	perHour := map[string]int{} // kills of each hour's activity: fewer than MaxAttempts
	kills, runs := 0, 0
	for kills < wantKills {
		runs++
		run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: payload.ArchiveWorkflowID("main"), TaskQueue: payload.TaskQueue},
			workflows.Archive, payload.ArchiveInput{Source: "main", IndexHours: 24})
		must(t, err)
		rw := waitFor(e.ctx, run)
		for kills < wantKills {
			p := startArchiveWorker(t, e)
			target := targets[kills%len(targets)]
			hour, step, ok := killAtStep(t, p, target, rw, perHour)
			if !ok {
				break
			}
			perHour[hour]++
			killedAt[step]++
			kills++
			t.Logf("kill %d: worker killed in step %s of hour %s (target %s)", kills, step, hour, target)
			checkNothingLost(t, e, orig, true)
		}
		if kills >= wantKills {
			startArchiveWorker(t, e)
		}
		select {
		case <-rw.done:
			if rw.err != nil {
				t.Fatalf("archive run %d: %v", runs, rw.err)
			}
		case <-time.After(10 * time.Minute):
			t.Fatal("archive run did not end")
		}
		if kills < wantKills { // more hours for the next run
			bulkHours(t, e, w, base, hours, 3, 30000)
			hours += 3
			orig = indexEvents(t, e.ctx, e.store, "main")
			stored, _ := storedEvents(t, e.ctx, e.remote, "main")
			for _, ev := range stored {
				orig[ev.Seq] = ev
			}
		}
	}
	t.Logf("%d kills in %d runs, by step: %v", kills, runs, killedAt)
	if len(killedAt) < 4 {
		t.Fatalf("kills landed in only %d steps: %v", len(killedAt), killedAt)
	}
	res := e.runArchive(t, 24)
	t.Logf("a last run archived %d hours", len(res.Hours))
	if checkNothingLost(t, e, orig, true) != hours {
		t.Fatal("not every old hour was archived")
	}
	stored, _ := storedEvents(t, e.ctx, e.remote, "main")
	left := values(indexEvents(t, e.ctx, e.store, "main"))
	checkEveryEventOnce(t, orig, left, stored)
}

// killAtStep waits until the worker logs step of an hour killed fewer
// than 4 times so far (ten attempts fail the run) and kills it at once,
// returning the hour and the last step it had logged (the kill lands in
// that step or, when steps are quick, a later one); ok is false when the
// run ended first, and then the worker is stopped too.
func killAtStep(t *testing.T, p *workerProc, step string, rw *runWait, killed map[string]int) (hour, killedIn string, ok bool) {
	t.Helper()
	kill := func() {
		must(t, p.cmd.Process.Signal(syscall.SIGKILL))
		p.cmd.Wait()
	}
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-rw.done:
			kill()
			return "", "", false
		default:
		}
		seen := p.steps()
		for _, s := range seen {
			if s[1] == step && killed[s[0]] < 4 {
				kill()
				last := p.steps()
				return s[0], last[len(last)-1][1], true
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("worker never reached step %s; output:\n%s", step, p.out.String())
	return "", "", false
}
