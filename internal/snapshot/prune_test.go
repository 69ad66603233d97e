package snapshot

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

var pruneIDs = []string{"20261129T061500Z", "20261129T062000Z", "20261129T062500Z", "20261129T063000Z"}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// buildChain publishes pruneIDs: the first written with build, each later one
// hard-linking every file of the one before (Builder.Link), so all four share
// the same inodes.
func buildChain(t *testing.T, dir string) {
	t.Helper()
	rows, _ := allTypesRows()
	b, m := build(t, dir, pruneIDs[0], 10, rows)
	if err := b.Publish(m); err != nil {
		t.Fatal(err)
	}
	for i, id := range pruneIDs[1:] {
		prev, err := OpenSnapshot(filepath.Join(dir, SnapshotsDir, pruneIDs[i]))
		if err != nil {
			t.Fatal(err)
		}
		b, err := NewBuilder(dir, id)
		if err != nil {
			t.Fatal(err)
		}
		for rel, d := range prev.Manifest.Files {
			if err := b.Link(rel, prev.Path(rel), d); err != nil {
				t.Fatal(err)
			}
		}
		m := prev.Manifest
		m.SnapshotID, m.CreatedAt, m.Files = "", time.Time{}, nil
		m.Kind, m.Prev = SnapshotRefresh, prev.Manifest.SnapshotID
		m.Position.Seq += 10
		if err := b.Publish(m); err != nil {
			t.Fatal(err)
		}
	}
	if cur := checkCurrent(t, dir); cur != pruneIDs[len(pruneIDs)-1] {
		t.Fatalf("current %q", cur)
	}
}

// checkReadable opens, verifies and reads every table of snapshot id.
func checkReadable(t *testing.T, dir, id string) {
	t.Helper()
	s, err := OpenSnapshot(Folder(dir).Snapshot(id))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.VerifyAll(); err != nil {
		t.Fatalf("snapshot %s: %v", id, err)
	}
	for _, mt := range s.Manifest.Tables {
		r, err := s.OpenTable(mt.Schema, mt.Table)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, r); int64(len(got)) != mt.Rows {
			t.Fatalf("snapshot %s: read %d rows, manifest says %d", id, len(got), mt.Rows)
		}
		r.Close()
	}
}

// checkPruned asserts the result, what ListSnapshots sees, that every kept
// snapshot reads and that .trash is empty.
func checkPruned(t *testing.T, dir string, res PruneResult, removed, kept []string) {
	t.Helper()
	if !slices.Equal(res.Removed, removed) || !slices.Equal(res.Kept, kept) {
		t.Fatalf("removed %v kept %v, want removed %v kept %v", res.Removed, res.Kept, removed, kept)
	}
	ids, err := ListSnapshots(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, kept) {
		t.Fatalf("listed %v, want %v", ids, kept)
	}
	for _, id := range removed {
		if _, err := os.Lstat(Folder(dir).Snapshot(id)); !os.IsNotExist(err) {
			t.Fatalf("snapshot %s still there: %v", id, err)
		}
	}
	for _, id := range kept {
		checkReadable(t, dir, id)
	}
	if ents, _ := os.ReadDir(Folder(dir).Trash()); len(ents) != 0 {
		t.Fatalf("trash left: %v", ents)
	}
}

func TestPruneKeepsNewestAndHardLinksSurvive(t *testing.T) {
	dir := t.TempDir()
	buildChain(t, dir)
	res, err := Prune(dir, 2, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	checkPruned(t, dir, res, pruneIDs[:2], pruneIDs[2:])
	if cur := checkCurrent(t, dir); cur != pruneIDs[3] {
		t.Fatalf("current %q", cur)
	}
	// The kept snapshots still share the inodes first written by the removed one.
	c, _ := OpenSnapshot(filepath.Join(dir, SnapshotsDir, pruneIDs[2]))
	d, _ := OpenSnapshot(filepath.Join(dir, SnapshotsDir, pruneIDs[3]))
	for rel := range c.Manifest.Files {
		sc, err := os.Stat(c.Path(rel))
		if err != nil {
			t.Fatal(err)
		}
		sd, err := os.Stat(d.Path(rel))
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(sc, sd) {
			t.Errorf("%s: no longer one inode", rel)
		}
	}
	// Pruning again changes nothing.
	res, err = Prune(dir, 2, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	checkPruned(t, dir, res, nil, pruneIDs[2:])
}

func TestPruneKeepsOldCurrentAndNewer(t *testing.T) {
	dir := t.TempDir()
	buildChain(t, dir)
	// current back at the second snapshot: it is kept although keep=1 would
	// keep only the newest, and so is everything newer than it (a publish may
	// be in progress).
	if err := swapCurrent(dir, pruneIDs[1]); err != nil {
		t.Fatal(err)
	}
	res, err := Prune(dir, 1, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	checkPruned(t, dir, res, pruneIDs[:1], pruneIDs[1:])
	if cur := checkCurrent(t, dir); cur != pruneIDs[1] {
		t.Fatalf("current %q", cur)
	}
}

func TestPruneCrashLeavesTrashThatTheNextPruneEmpties(t *testing.T) {
	dir := t.TempDir()
	buildChain(t, dir)
	crash := errors.New("simulated crash")
	crashPoint = func(step string) error {
		if step == "prune-trashed" {
			return crash
		}
		return nil
	}
	defer func() { crashPoint = func(string) error { return nil } }()
	if _, err := Prune(dir, 2, quietLog()); !errors.Is(err, crash) {
		t.Fatalf("prune: %v", err)
	}
	crashPoint = func(string) error { return nil }
	// The first snapshot sits whole in .trash, out of ListSnapshots' sight.
	trashed := filepath.Join(dir, TrashDir, pruneIDs[0])
	if _, err := os.Stat(filepath.Join(trashed, ManifestName)); err != nil {
		t.Fatalf("trashed snapshot: %v", err)
	}
	if ids, _ := ListSnapshots(dir); !slices.Equal(ids, pruneIDs[1:]) {
		t.Fatalf("listed %v", ids)
	}
	// Half deleted: the manifest already gone, a file left.
	if err := os.Remove(filepath.Join(trashed, ManifestName)); err != nil {
		t.Fatal(err)
	}
	res, err := Prune(dir, 2, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	checkPruned(t, dir, res, pruneIDs[1:2], pruneIDs[2:])
}

func TestPruneRefusesBadKeepAndBrokenCurrent(t *testing.T) {
	dir := t.TempDir()
	buildChain(t, dir)
	for _, keep := range []int{0, -1} {
		if _, err := Prune(dir, keep, quietLog()); err == nil {
			t.Fatalf("keep=%d accepted", keep)
		}
	}
	// current naming a snapshot that is not there: nothing is removed.
	if err := swapCurrent(dir, "20261129T070000Z"); err != nil {
		t.Fatal(err)
	}
	if _, err := Prune(dir, 1, quietLog()); err == nil {
		t.Fatal("prune with a broken current accepted")
	}
	if ids, _ := ListSnapshots(dir); fmt.Sprint(ids) != fmt.Sprint(pruneIDs) {
		t.Fatalf("listed %v", ids)
	}
	// No current at all: the newest keep are kept.
	if err := os.Remove(filepath.Join(dir, CurrentLink)); err != nil {
		t.Fatal(err)
	}
	res, err := Prune(dir, 1, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	checkPruned(t, dir, res, pruneIDs[:3], pruneIDs[3:])
}

func TestPruneHeldKeepsHeldSnapshots(t *testing.T) {
	dir := t.TempDir()
	buildChain(t, dir)
	// The second snapshot is held (say, not yet confirmed on object
	// storage): retention removes the first only.
	var asked []string
	res, err := PruneHeld(dir, 1, func(id string) bool {
		asked = append(asked, id)
		return id == pruneIDs[1]
	}, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	checkPruned(t, dir, res, []string{pruneIDs[0], pruneIDs[2]}, []string{pruneIDs[1], pruneIDs[3]})
	if !slices.Equal(res.Held, []string{pruneIDs[1]}) {
		t.Fatalf("held %v", res.Held)
	}
	if !slices.Equal(asked, pruneIDs[:3]) {
		t.Fatalf("held asked about %v, want only what retention would remove", asked)
	}
	checkReadable(t, dir, pruneIDs[1])
}
