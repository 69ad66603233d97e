package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
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

// refreshKillSteps are the steps of a refresh a kill is aimed at, in the
// order a run takes them: the plan, a table's fold (link, pair, rewrite),
// the publish (the new snapshot becomes current) and the pruning after it.
var refreshKillSteps = []string{"PlanRefresh", "RefreshTable", "PublishRefresh", "Prune"}

// nextKillStep is the step of steps with the fewest kills landed so far
// (the first of them on a tie).
func nextKillStep(steps []string, landed map[string]int) string {
	best := steps[0]
	for _, s := range steps[1:] {
		if landed[s] < landed[best] {
			best = s
		}
	}
	return best
}

// TestRefreshSurvivesWorkerKill kills the worker process in chosen steps
// of refreshes (links, pairs, and full rewrites of a 200k-row table:
// twice in every step of refreshKillSteps, the rewrites in their table
// folds) and of compactions (in CompactTable, at least twice), at least 12
// times in all; each kill is aimed by the run's state (killInStep), not by
// a timer.
// Each time a new worker finishes the run; current only ever names
// complete snapshots, and after every refresh the published snapshot
// equals the live tables.
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
	kills, compactKills := 0, 0
	landed := map[string]int{} // kills that landed in each step
	began := time.Now()        // for the log only
	kill := func(round int, id, runID, step string, after ...string) bool {
		k := killInStep(t, e, wp, id, runID, step, after...)
		if !k.Killed {
			t.Logf("round %d: %s of %s not caught running: no kill", round, step, id)
			return false
		}
		kills++
		if k.Landed {
			landed[step]++
		}
		t.Logf("round %d: worker killed in %s of %s (attempt %d, landed in it: %v), %s into the rounds",
			round, step, id, k.Attempt, k.Landed, time.Since(began).Round(time.Second))
		wp = startWorkerProc(t, bin, e.frontend, e, e.indexDSN)
		return true
	}
	// Chains grow for 32 rounds (compactions at 16 entries), then two
	// rounds with deltas off rewrite every changed table. Odd rounds kill
	// until killsPerStep kills landed in each step of refreshKillSteps.
	const rounds, killsPerStep = 34, 2
	for round := 1; round <= rounds; round++ {
		w.step(t, e, 6)
		w.exec(t, e, "UPDATE big SET n = n + 1 WHERE id % 97 = ?", round%97)
		e.waitCaughtUp(t)
		in := payload.RefreshInput{Source: "main", TableDeltas: round <= rounds-2}
		id := payload.RefreshWorkflowID("main")
		run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: id, TaskQueue: payload.TaskQueue},
			workflows.Refresh, in)
		must(t, err)
		step := nextKillStep(refreshKillSteps, landed)
		switch {
		case !in.TableDeltas:
			kill(round, id, run.GetRunID(), "RefreshTable") // in the rewrite of every changed table
		case round%2 == 1 && landed[step] < killsPerStep:
			kill(round, id, run.GetRunID(), step, refreshKillSteps[slices.Index(refreshKillSteps, step)+1:]...)
		}
		var res workflows.RefreshResult
		if err := run.Get(e.ctx, &res); err != nil {
			t.Fatalf("round %d: Refresh after a kill: %v\nworker output:\n%s", round, err, wp.out.String())
		}
		if res.Refused {
			t.Fatalf("round %d: refused: %v", round, res.Reasons)
		}
		if len(res.Compact) > 0 {
			// At once: a compaction of small tables takes milliseconds.
			if kill(round, payload.CompactWorkflowID("main"), "", "CompactTable") {
				compactKills++
			}
			if err := e.waitClosed(t, payload.CompactWorkflowID("main")); err != nil {
				t.Fatalf("round %d: Compact of %v after a kill: %v", round, res.Compact, err)
			}
		}
		snap := e.current(t)
		if snap.Manifest.SnapshotID != res.SnapshotID {
			t.Fatalf("round %d: current %s, refresh published %s", round, snap.Manifest.SnapshotID, res.SnapshotID)
		}
		checkLive(t, e, eng, snap, fmt.Sprintf("round %d", round))
	}
	if err := checkWatch(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d kills, %d of them during compactions; landed by step: %v", kills, compactKills, landed)
	if kills < 12 || compactKills < 2 {
		t.Fatalf("only %d kills (%d in compactions)", kills, compactKills)
	}
	for _, s := range refreshKillSteps {
		if landed[s] < killsPerStep {
			t.Errorf("%d kills landed in %s, want %d (landed: %v)", landed[s], s, killsPerStep, landed)
		}
	}
	if landed["CompactTable"] < 2 {
		t.Errorf("%d kills landed in CompactTable, want 2 (landed: %v)", landed["CompactTable"], landed)
	}
}
