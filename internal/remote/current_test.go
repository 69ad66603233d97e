package remote

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// TestUploadPending: the unconfirmed snapshots up to the one named go up,
// oldest first; a second run has nothing to upload.
func TestUploadPending(t *testing.T) {
	f := newFixture(t)
	f.publish(ids[0], "", 10, "table", "pd0", "up0")
	f.publish(ids[1], ids[0], 20, "table", "pd0", "up0", "pd1", "up1")
	f.publish(ids[2], ids[1], 30, "table", "pd0", "up0", "pd1", "up1", "pd2", "up2")
	stats, err := f.m.UploadPending(f.ctx, ids[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 2 || stats[0].SnapshotID != ids[0] || stats[1].SnapshotID != ids[1] || stats[1].Current != ids[1] {
		t.Fatalf("uploads %+v", stats)
	}
	if stats, err := f.m.UploadPending(f.ctx, ids[1], nil); err != nil || len(stats) != 0 {
		t.Fatalf("second run uploaded %+v (%v)", stats, err)
	}
	if pending, _ := f.m.Pending(""); !slices.Equal(pending, ids[2:]) {
		t.Fatalf("pending %v", pending)
	}
}

// TestDownloadCurrent: a folder without a current snapshot gets the
// store's, made current, after room said yes; room's refusal stops it
// before anything is written; a folder with a current one, or a store
// without one, gets nothing and the reason.
func TestDownloadCurrent(t *testing.T) {
	f := newFixture(t)
	empty, err := New(f.store, "main", filepath.Join(t.TempDir(), "main"), quiet())
	if err != nil {
		t.Fatal(err)
	}
	never := func(string, uint64) error { t.Fatal("room asked"); return nil }
	if got, err := empty.DownloadCurrent(f.ctx, never, nil); err != nil || got.SnapshotID != "" || got.Reason != "no current snapshot on the remote store" {
		t.Fatalf("empty store: %+v (%v)", got, err)
	}
	f.publish(ids[0], "", 10, "table", "pd0", "up0")
	f.upload(ids[0])
	full := errors.New("no room")
	var asked uint64
	refuse := func(id string, need uint64) error {
		if id != ids[0] {
			t.Errorf("room asked for %s", id)
		}
		asked = need
		return full
	}
	if _, err := empty.DownloadCurrent(f.ctx, refuse, nil); !errors.Is(err, full) || asked == 0 {
		t.Fatalf("room refused: %v (need %d)", err, asked)
	}
	if _, err := os.Stat(snapshot.DownloadPath(empty.Dir, ids[0])); !os.IsNotExist(err) {
		t.Fatalf("refused download wrote: %v", err)
	}
	yes := func(string, uint64) error { return nil }
	got, err := empty.DownloadCurrent(f.ctx, yes, nil)
	if err != nil || got.SnapshotID != ids[0] || got.Stats.Files == 0 {
		t.Fatalf("download: %+v (%v)", got, err)
	}
	if cur, err := snapshot.ResolveCurrent(empty.Dir); err != nil || cur != ids[0] {
		t.Fatalf("current %s (%v)", cur, err)
	}
	if got, err := empty.DownloadCurrent(f.ctx, never, nil); err != nil || got.SnapshotID != "" || got.Reason != "the current snapshot is on local disk" {
		t.Fatalf("second call: %+v (%v)", got, err)
	}
}

// TestCurrentMissing: no current link, or one to a snapshot that is gone,
// is missing; a current that opens is not.
func TestCurrentMissing(t *testing.T) {
	f := newFixture(t)
	if missing, err := CurrentMissing(f.dir); !missing || err != nil {
		t.Fatalf("no folder: %v (%v)", missing, err)
	}
	s := f.publish(ids[0], "", 10, "table")
	if missing, err := CurrentMissing(f.dir); missing || err != nil {
		t.Fatalf("published: %v (%v)", missing, err)
	}
	if err := os.RemoveAll(s.Dir); err != nil {
		t.Fatal(err)
	}
	if missing, err := CurrentMissing(f.dir); !missing || err != nil {
		t.Fatalf("snapshot gone: %v (%v)", missing, err)
	}
}

// failingList is a store whose List fails, counting the calls.
type failingList struct {
	storage.Store
	calls int
}

func (s *failingList) List(context.Context, string, func(storage.Info) error) error {
	s.calls++
	return errors.New("store down")
}

// TestTakenOr: an id is taken when local says so or the store holds
// objects of it; a store that fails is asked once and then ignored.
func TestTakenOr(t *testing.T) {
	f := newFixture(t)
	f.publish(ids[0], "", 10, "table")
	f.upload(ids[0])
	local := func(id string) (bool, error) { return id == ids[1], nil }
	taken := f.m.TakenOr(f.ctx, local)
	for id, want := range map[string]bool{ids[0]: true, ids[1]: true, ids[2]: false} {
		if got, err := taken(id); got != want || err != nil {
			t.Errorf("%s: taken %v (%v), want %v", id, got, err, want)
		}
	}
	down := &failingList{Store: f.store}
	m, err := New(down, "main", f.dir, quiet())
	if err != nil {
		t.Fatal(err)
	}
	taken = m.TakenOr(f.ctx, local)
	for _, id := range []string{ids[0], ids[2]} {
		if got, err := taken(id); got || err != nil {
			t.Errorf("%s with the store down: taken %v (%v)", id, got, err)
		}
	}
	if down.calls != 1 {
		t.Errorf("store asked %d times, want once", down.calls)
	}
	if got, err := taken(ids[1]); !got || err != nil {
		t.Errorf("local id with the store down: %v (%v)", got, err)
	}
}
