package temporal

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/workflows"
)

// watchCurrent checks, until the test ends, that every snapshot current
// ever names is complete (its manifest's digests hold).
func watchCurrent(t *testing.T, sourceDir string) func() error {
	var stop atomic.Bool
	var seen sync.Map
	var watchErr atomic.Value
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			if id, err := snapshot.ResolveCurrent(sourceDir); err == nil {
				if _, ok := seen.Load(id); !ok {
					snap, err := snapshot.OpenSnapshot(snapshot.Folder(sourceDir).Snapshot(id))
					if err == nil {
						err = snap.VerifyAll()
					}
					if err != nil {
						watchErr.Store(fmt.Errorf("current named %s: %w", id, err))
					}
					seen.Store(id, true)
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return func() error {
		stop.Store(true)
		<-done
		err, _ := watchErr.Load().(error)
		return err
	}
}

// kill SIGKILLs a worker process.
func (p *workerProc) kill(t *testing.T) {
	t.Helper()
	must(t, p.cmd.Process.Signal(syscall.SIGKILL))
	p.cmd.Wait()
}

// TestRefreshSurvivesWorkerKill kills the worker process at random moments
// of refreshes (links, pairs, and full rewrites of a 200k-row table) and of
// compactions, at least 12 times. Each time a new worker finishes the run;
// current only ever names complete snapshots, and after every refresh the
// published snapshot equals the live tables.
func TestRefreshSurvivesWorkerKill(t *testing.T) {
	t.Parallel() // a waiting test: see TestMain
	bin := buildDbtrail(t)
	e := newBackupEnv(t, withoutWorker())
	eng := newEngine(t)
	w := newWorkload(4)
	w.setup(t, e, 30)
	for _, q := range []string{
		`CREATE TABLE big (id INT PRIMARY KEY, pad VARCHAR(60), n BIGINT)`,
		`INSERT INTO big SELECT seq, CONCAT('row-', seq, REPEAT('x', seq % 40)), seq FROM seq_1_to_200000`,
	} {
		w.exec(t, e, q)
	}
	sourceDir := filepath.Join(e.acts.BackupDir, "main")
	wp := startWorkerProc(t, bin, e.frontend, e, e.indexDSN)
	e.waitCaughtUp(t)
	e.fullBackup(t)
	checkWatch := watchCurrent(t, sourceDir)
	r := rand.New(rand.NewPCG(4, 4))
	kills, compactKills := 0, 0
	// Chains grow for 32 rounds (two compactions, at 16 entries), then two
	// rounds with deltas off rewrite every changed table.
	const rounds = 34
	for round := 1; round <= rounds; round++ {
		w.step(t, e, 6)
		w.exec(t, e, "UPDATE big SET n = n + 1 WHERE id % 97 = ?", round%97)
		e.waitCaughtUp(t)
		in := workflows.RefreshInput{Source: "main", TableDeltas: round <= rounds-2}
		run, err := StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: workflows.RefreshWorkflowID("main"), TaskQueue: workflows.TaskQueue},
			workflows.Refresh, in)
		must(t, err)
		if round%2 == 1 || !in.TableDeltas {
			time.Sleep(time.Duration(r.IntN(2500)) * time.Millisecond)
			wp.kill(t)
			kills++
			wp = startWorkerProc(t, bin, e.frontend, e, e.indexDSN)
		}
		var res workflows.RefreshResult
		if err := run.Get(e.ctx, &res); err != nil {
			t.Fatalf("round %d: Refresh after a kill: %v\nworker output:\n%s", round, err, wp.out.String())
		}
		if res.Refused {
			t.Fatalf("round %d: refused: %v", round, res.Reasons)
		}
		snap := e.current(t)
		if snap.Manifest.SnapshotID != res.SnapshotID {
			t.Fatalf("round %d: current %s, refresh published %s", round, snap.Manifest.SnapshotID, res.SnapshotID)
		}
		checkLive(t, e, eng, snap, fmt.Sprintf("round %d", round))
		if len(res.Compact) > 0 {
			time.Sleep(time.Duration(r.IntN(400)) * time.Millisecond)
			wp.kill(t)
			kills++
			compactKills++
			wp = startWorkerProc(t, bin, e.frontend, e, e.indexDSN)
			if err := e.waitClosed(t, workflows.CompactWorkflowID("main")); err != nil {
				t.Fatalf("round %d: Compact after a kill: %v", round, err)
			}
		}
	}
	if err := checkWatch(); err != nil {
		t.Fatal(err)
	}
	if kills < 12 || compactKills < 2 {
		t.Fatalf("only %d kills (%d in compactions)", kills, compactKills)
	}
	t.Logf("%d kills, %d of them during compactions", kills, compactKills)
}
