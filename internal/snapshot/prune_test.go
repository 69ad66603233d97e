package snapshot

import (
	"errors"
	gobuild "go/build"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

func TestPruneRemovesTheGivenIDsAndHardLinksSurvive(t *testing.T) {
	dir := t.TempDir()
	buildChain(t, dir)
	res, err := Prune(dir, pruneIDs[:2], quietLog())
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
	// No id: nothing removed.
	res, err = Prune(dir, nil, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	checkPruned(t, dir, res, nil, pruneIDs[2:])
}

// TestPruneRefusesCurrentNewerAndUnknown: an id that is current, newer
// than current (a publish in progress), not published, or any id while
// the current link is broken refuses the whole prune: nothing is removed,
// not even the ids that could go.
func TestPruneRefusesCurrentNewerAndUnknown(t *testing.T) {
	dir := t.TempDir()
	buildChain(t, dir)
	if err := swapCurrent(dir, pruneIDs[1]); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ids  []string
		want string
	}{
		{[]string{pruneIDs[0], pruneIDs[1]}, "is the current snapshot"},
		{[]string{pruneIDs[0], pruneIDs[3]}, "is the current snapshot of " + dir + " or newer than it"},
		{[]string{pruneIDs[0], "20261129T050000Z"}, "20261129T050000Z is not a published snapshot of " + dir},
		{[]string{"../x"}, "is not a published snapshot"},
	} {
		_, err := Prune(dir, c.ids, quietLog())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("prune %v: %v, want an error saying %q", c.ids, err, c.want)
		}
		if ids, _ := ListSnapshots(dir); !slices.Equal(ids, pruneIDs) {
			t.Fatalf("prune %v refused but listed %v", c.ids, ids)
		}
	}
	res, err := Prune(dir, pruneIDs[:1], quietLog())
	if err != nil {
		t.Fatal(err)
	}
	checkPruned(t, dir, res, pruneIDs[:1], pruneIDs[1:])

	// current naming a snapshot that is not there: nothing is removed.
	if err := swapCurrent(dir, "20261129T070000Z"); err != nil {
		t.Fatal(err)
	}
	if _, err := Prune(dir, pruneIDs[1:2], quietLog()); err == nil {
		t.Fatal("prune with a broken current accepted")
	}
	if ids, _ := ListSnapshots(dir); !slices.Equal(ids, pruneIDs[1:]) {
		t.Fatalf("listed %v", ids)
	}
	// No current at all: any published snapshot may go.
	if err := os.Remove(filepath.Join(dir, CurrentLink)); err != nil {
		t.Fatal(err)
	}
	res, err = Prune(dir, pruneIDs[2:], quietLog())
	if err != nil {
		t.Fatal(err)
	}
	checkPruned(t, dir, res, pruneIDs[2:], pruneIDs[1:2])
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
	if _, err := Prune(dir, pruneIDs[:2], quietLog()); !errors.Is(err, crash) {
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
	res, err := Prune(dir, pruneIDs[1:2], quietLog())
	if err != nil {
		t.Fatal(err)
	}
	checkPruned(t, dir, res, pruneIDs[1:2], pruneIDs[2:])
}

// TestList: every published snapshot with the time its id names and its
// manifest's seq, oldest first, and current; a folder under snapshots/
// without a manifest is not listed.
func TestList(t *testing.T) {
	dir := t.TempDir()
	buildChain(t, dir)
	if err := os.MkdirAll(Folder(dir).Snapshot("20261129T070000Z"), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if l.Current != pruneIDs[3] || len(l.Snapshots) != len(pruneIDs) {
		t.Fatalf("listing %+v", l)
	}
	for i, s := range l.Snapshots {
		made, _ := ParseSnapshotID(pruneIDs[i])
		if s.ID != pruneIDs[i] || !s.Made.Equal(made) || i > 0 && s.Seq != l.Snapshots[i-1].Seq+10 {
			t.Fatalf("snapshot %d: %+v", i, s)
		}
	}
	if err := swapCurrent(dir, "20261129T080000Z"); err != nil {
		t.Fatal(err)
	}
	if _, err := List(dir); err == nil {
		t.Fatal("a broken current listed")
	}
}

// TestFormatDecidesNoPolicy: the format package does not import the
// retention policy's package; what to prune is its caller's decision.
func TestFormatDecidesNoPolicy(t *testing.T) {
	pkg, err := gobuild.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(pkg.Imports, "github.com/dbtrail/dbtrail/internal/retention") {
		t.Fatal("package snapshot imports internal/retention")
	}
}
