package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/workers"
	"github.com/dbtrail/dbtrail/workflows"
)

// shadowQueue is the task queue of the shadow worker, which takes full
// backups into another backup folder, to compare with refreshed snapshots.
const shadowQueue = "shadow"

// startShadow starts a worker whose activities write to their own backup
// folder.
func startShadow(t *testing.T, e *backupEnv) *activities.Activities {
	t.Helper()
	acts := *e.acts
	acts.BackupDir = filepath.Join(e.dir, "shadow-backups")
	acts.WorkDir = filepath.Join(e.dir, "shadow-work")
	w := worker.New(e.c, shadowQueue, workers.Options())
	workers.RegisterAll(w, &acts)
	must(t, w.Start())
	t.Cleanup(w.Stop)
	return &acts
}

// shadowBackup takes a full backup of the same moment into the shadow
// folder and requires every table to read as in snap.
func shadowBackup(t *testing.T, e *backupEnv, shadow *activities.Activities, eng *fold.Engine, snap *snapshot.Snapshot, n int) {
	t.Helper()
	run, err := temporalclient.StartWorkflow(e.ctx, e.c, client.StartWorkflowOptions{ID: fmt.Sprintf("fullbackup-shadow-%d", n), TaskQueue: shadowQueue},
		workflows.FullBackup, payload.FullBackupInput{Source: "main"})
	must(t, err)
	var res workflows.FullBackupResult
	if err := run.Get(e.ctx, &res); err != nil {
		t.Fatalf("shadow FullBackup: %v", err)
	}
	full, err := snapshot.OpenCurrent(filepath.Join(shadow.BackupDir, "main"))
	must(t, err)
	if full.Manifest.Position.Seq != snap.Manifest.Position.Seq {
		t.Fatalf("shadow backup at seq %d, refreshed snapshot at %d (traffic is paused: they must agree)", full.Manifest.Position.Seq, snap.Manifest.Position.Seq)
	}
	for _, mt := range snap.Manifest.Tables {
		a, _ := snapshotRows(t, e, eng, snap, mt.Schema, mt.Table)
		b, _ := snapshotRows(t, e, eng, full, mt.Schema, mt.Table)
		if err := sameRows(a, b); err != nil {
			t.Fatalf("refreshed %s vs full backup %s, %s.%s: %v", snap.Manifest.SnapshotID, full.Manifest.SnapshotID, mt.Schema, mt.Table, err)
		}
		fm, _ := full.Manifest.Table(mt.Schema, mt.Table)
		if mt.Origin == snapshot.OriginRewritten && fm.Fingerprint != mt.Fingerprint {
			t.Fatalf("%s.%s: rewritten table file fingerprint %s, full backup %s", mt.Schema, mt.Table, mt.Fingerprint, fm.Fingerprint)
		}
	}
}

func newEngine(t *testing.T) *fold.Engine {
	t.Helper()
	eng, err := fold.Open(t.Context(), fold.Options{TempDir: t.TempDir(), MemoryLimit: "256MB"})
	must(t, err)
	t.Cleanup(func() { eng.Close() })
	return eng
}

// TestRefreshModel: a random workload with 52 refreshes covering links,
// pairs, compactions and rewrites (deltas off, and chains that age); after
// each refresh, with traffic paused and capture caught up, every table read
// through its chain equals the live table, and every few refreshes a full
// backup of the same moment reads identically. The DuckDB views agree at
// the end, and Refresh and Compact histories replay.
func TestRefreshModel(t *testing.T) {
	e := newBackupEnv(t)
	shadow := startShadow(t, e)
	eng := newEngine(t)
	w := newWorkload(1)
	w.setup(t, e, 60)
	e.waitCaughtUp(t)
	e.fullBackup(t)
	seen := map[string]int{}
	compactions := 0
	for step := 1; step <= 52; step++ {
		in := payload.RefreshInput{TableDeltas: step%20 != 0}
		switch {
		case step%13 == 0: // zero changes
		default:
			w.step(t, e, 1+step%7*3)
		}
		e.waitCaughtUp(t)
		res := e.refresh(t, in)
		if res.Refused {
			t.Fatalf("step %d: refused: %v", step, res.Reasons)
		}
		snap := e.current(t)
		if snap.Manifest.SnapshotID != res.SnapshotID || snap.Manifest.Prev != res.Prev || snap.Manifest.Kind != snapshot.SnapshotRefresh {
			t.Fatalf("step %d: current %s (prev %s), refresh published %s from %s", step, snap.Manifest.SnapshotID, snap.Manifest.Prev, res.SnapshotID, res.Prev)
		}
		for _, mt := range snap.Manifest.Tables {
			seen[mt.Origin]++
		}
		checkLive(t, e, eng, snap, fmt.Sprintf("step %d", step))
		if step%6 == 0 || step == 52 {
			shadowBackup(t, e, shadow, eng, snap, step)
		}
		if len(res.Compact) > 0 {
			compactions++
			if err := e.waitClosed(t, payload.CompactWorkflowID("main")); err != nil {
				t.Fatalf("step %d: Compact: %v", step, err)
			}
		}
	}
	t.Logf("table origins over the run: %v; %d compactions", seen, compactions)
	for _, o := range []string{snapshot.OriginLinked, snapshot.OriginPair, snapshot.OriginRewritten, snapshot.OriginCompacted + "|" + snapshot.OriginCompactedPair} {
		n := 0
		for _, k := range splitOr(o) {
			n += seen[k]
		}
		if n == 0 {
			t.Fatalf("no table was %s over the run (%v)", o, seen)
		}
	}
	if compactions == 0 {
		t.Fatal("no compaction ran")
	}
	snap := e.current(t)
	checkViews(t, e, snap, map[string]string{"ints": "id, v, n", "strs": "k, body", "quiet": "id, note"})
	replay(t, e, payload.RefreshWorkflowID("main"))
	replay(t, e, payload.CompactWorkflowID("main"))
}

func splitOr(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '|' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

// TestRefreshZeroChangesLinksEverything: a refresh with no change writes no
// table data: every file of the new snapshot is the previous one's by hard
// link.
func TestRefreshZeroChangesLinksEverything(t *testing.T) {
	e := newBackupEnv(t)
	w := newWorkload(2)
	w.setup(t, e, 20)
	e.waitCaughtUp(t)
	e.fullBackup(t)
	prev := e.current(t)
	e.waitCaughtUp(t)
	res := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	snap := e.current(t)
	if res.SnapshotID == prev.Manifest.SnapshotID || snap.Manifest.SnapshotID != res.SnapshotID {
		t.Fatalf("refresh published %s, prev %s, current %s", res.SnapshotID, prev.Manifest.SnapshotID, snap.Manifest.SnapshotID)
	}
	if len(snap.Manifest.Files) != len(prev.Manifest.Files) {
		t.Fatalf("%d files, previous %d", len(snap.Manifest.Files), len(prev.Manifest.Files))
	}
	for rel, d := range prev.Manifest.Files {
		if snap.Manifest.Files[rel] != d {
			t.Fatalf("%s: digest %v, previous %v", rel, snap.Manifest.Files[rel], d)
		}
		a, err := os.Stat(prev.Path(rel))
		must(t, err)
		b, err := os.Stat(snap.Path(rel))
		must(t, err)
		if !os.SameFile(a, b) {
			t.Fatalf("%s is not a hard link of the previous snapshot's", rel)
		}
	}
	for _, mt := range snap.Manifest.Tables {
		if mt.Origin != snapshot.OriginLinked {
			t.Fatalf("%s.%s origin %s", mt.Schema, mt.Table, mt.Origin)
		}
	}
}

// TestRefreshDDLFoldsAddColumn: an ADD COLUMN in the window is folded by
// the refresh (no full backup): the table is rewritten from its previous
// file in the new shape and its chain restarts from the new table file;
// later refreshes pair again.
func TestRefreshDDLFoldsAddColumn(t *testing.T) {
	e := newBackupEnv(t)
	eng := newEngine(t)
	w := newWorkload(3)
	w.setup(t, e, 20)
	e.waitCaughtUp(t)
	e.fullBackup(t)
	w.step(t, e, 5)
	e.waitCaughtUp(t)
	first := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	w.step(t, e, 5)
	w.exec(t, e, "ALTER TABLE ints ADD COLUMN extra VARCHAR(5) NULL")
	w.exec(t, e, "UPDATE ints SET extra = 'x' WHERE id = ?", w.ints[0])
	e.waitCaughtUp(t)
	res := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	if res.Refused || res.FullBackup != "" || res.SnapshotID == "" || res.Redump != nil {
		t.Fatalf("refresh across DDL: %+v", res)
	}
	snap := e.current(t)
	if snap.Manifest.SnapshotID != res.SnapshotID || snap.Manifest.Kind != snapshot.SnapshotRefresh {
		t.Fatalf("current %s (%s), refresh %s", snap.Manifest.SnapshotID, snap.Manifest.Kind, res.SnapshotID)
	}
	if _, err := os.Stat(filepath.Join(e.acts.BackupDir, "main", snapshot.SnapshotsDir, first.SnapshotID)); err != nil {
		t.Fatalf("the earlier refreshed snapshot is gone: %v", err)
	}
	mt, _ := snap.Manifest.Table("app", "ints")
	if len(mt.Chain) != 2 || mt.Origin != snapshot.OriginRewritten {
		t.Fatalf("ints after the ADD COLUMN: origin %s, chain %v", mt.Origin, mt.Chain)
	}
	checkLive(t, e, eng, snap, "after the folded ADD COLUMN")
	w.step(t, e, 8)
	e.waitCaughtUp(t)
	res = e.refresh(t, payload.RefreshInput{TableDeltas: true})
	if res.Refused {
		t.Fatalf("refresh after the folded ADD COLUMN refused: %v", res.Reasons)
	}
	snap = e.current(t)
	mt, _ = snap.Manifest.Table("app", "ints")
	if mt.Origin != snapshot.OriginPair || len(mt.Chain) != 4 {
		t.Fatalf("ints after the next refresh: %s chain %v", mt.Origin, mt.Chain)
	}
	checkLive(t, e, eng, snap, "refresh after the folded ADD COLUMN")
}
