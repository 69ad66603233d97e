package remote

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// putOldLayout puts the local snapshot s on the store as a release before
// content objects did: every file under snapshots/<id>/<rel>, the manifest
// last, current moved to it, confirmed.
func (f *fixture) putOldLayout(s *snapshot.Snapshot) {
	t := f.t
	t.Helper()
	id := s.Manifest.SnapshotID
	for rel := range s.Manifest.Files {
		b, err := os.ReadFile(s.Path(rel))
		if err != nil {
			t.Fatal(err)
		}
		putAt(t, f, f.m.SnapshotName(id, rel), string(b))
	}
	mb, err := os.ReadFile(filepath.Join(s.Dir, snapshot.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	putAt(t, f, f.m.SnapshotName(id, snapshot.ManifestName), string(mb))
	if _, err := f.m.advance(f.ctx, id, s.Manifest.Position); err != nil {
		t.Fatal(err)
	}
	if err := f.m.confirm(id, mb); err != nil {
		t.Fatal(err)
	}
}

// checkRecordedSHA256 requires, on a store that records digests (S3), every
// content object of s to carry its sha256 in its Stat, whether it was put
// or copied: what lets an upload confirm it without reading it back.
func (f *fixture) checkRecordedSHA256(s *snapshot.Snapshot) {
	f.t.Helper()
	if _, ok := f.store.(*storage.Local); ok {
		return
	}
	for rel, d := range s.Manifest.Files {
		info, err := f.store.Stat(f.ctx, f.objectName(digest.Digest(d)))
		if err != nil || info.SHA256 != d.SHA256 {
			f.t.Fatalf("%s: Stat %+v (%v), want sha256 %s recorded", rel, info, err, d.SHA256)
		}
	}
}

// later makes the mirror's clock d ahead of the store's.
func (f *fixture) later(d time.Duration) { f.m.Now = func() time.Time { return time.Now().Add(d) } }

// TestOldLayoutReadAndMigratedLazily: a bucket written before content
// objects keeps working: its snapshot downloads from the old names, the
// next snapshot's upload copies the files it shares into content objects
// once (no file is sent again), and once retention removed the old
// snapshot the new one still reads whole.
func TestOldLayoutReadAndMigratedLazily(t *testing.T) {
	oldLayoutScenario(t, newFixture(t))
}

func oldLayoutScenario(t *testing.T, f *fixture) {
	old := f.publish(ids[0], "", 10, "table", "pd0", "up0")
	f.putOldLayout(old)
	if got := names(t, f, "main/"+ObjectsDir+"/"); len(got) != 0 {
		t.Fatalf("content objects in an old bucket: %v", got)
	}
	// A new machine reads the old snapshot.
	other := filepath.Join(t.TempDir(), "main")
	m2, _ := New(f.store, "main", other, quiet())
	if _, err := m2.Download(f.ctx, ids[0], nil); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "t.parquet")
	if err := m2.FetchFile(f.ctx, ids[0], "db/t.parquet", p, digest.Bytes([]byte("table"))); err != nil {
		t.Fatal(err)
	}

	ref := f.publish(ids[1], ids[0], 20, "table", "pd0", "up0", "pd1", "up1")
	st := f.upload(ids[1])
	if st.Copied != 3 || st.Uploaded != 3 || st.Skipped != 0 {
		t.Fatalf("upload after an old snapshot %+v: want its 3 files copied, the pair and the manifest sent", st)
	}
	f.checkRemote(ref)
	f.checkRecordedSHA256(ref)
	// The next refresh finds everything by content.
	f.publish(ids[2], ids[1], 30, "table", "pd0", "up0", "pd1", "up1", "pd2", "up2")
	if st := f.upload(ids[2]); st.Copied != 0 || st.Skipped != 5 || st.Uploaded != 3 {
		t.Fatalf("second upload %+v", st)
	}

	// Retention removes the old snapshot; its names go, the new ones read.
	if err := f.m.DeleteSnapshot(f.ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	f.later(2 * retention.ObjectGrace)
	if _, err := f.m.SweepObjects(f.ctx); err != nil {
		t.Fatal(err)
	}
	if got := names(t, f, f.m.SnapshotName(ids[0], "")+"/"); len(got) != 0 {
		t.Fatalf("old snapshot's names left: %v", got)
	}
	m3, _ := New(f.store, "main", filepath.Join(t.TempDir(), "main"), quiet())
	if _, err := m3.Download(f.ctx, ids[1], nil); err != nil {
		t.Fatal(err)
	}
}

// TestSweepObjects: retention's sweep keeps every object a kept manifest
// refers to and the young ones, deletes the rest, and records a delete
// Object Lock refuses.
func TestSweepObjects(t *testing.T) { sweepScenario(t, newFixture(t)) }

func sweepScenario(t *testing.T, f *fixture) {
	f.publish(ids[0], "", 10, "table v1", "pd0", "up0")
	f.upload(ids[0])
	s1 := f.publish(ids[1], ids[0], 20, "table v2", "pd0", "up0", "pd1", "up1")
	f.upload(ids[1])
	if err := f.m.DeleteSnapshot(f.ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	v1 := f.objectName(digest.Bytes([]byte("table v1")))
	// Young: nothing goes.
	sw, err := f.m.SweepObjects(f.ctx)
	if err != nil || len(sw.Deleted) != 0 || sw.Young != 1 || sw.Referenced != 5 {
		t.Fatalf("sweep of young objects %+v (%v)", sw, err)
	}
	// Past the grace period, Object Lock refusing: recorded, left.
	f.later(2 * retention.ObjectGrace)
	m := *f.m
	m.Store = lockedStore{Store: f.store, locked: v1}
	sw, err = m.SweepObjects(f.ctx)
	if err != nil || len(sw.Deleted) != 0 || !errors.Is(sw.Refused[v1], storage.ErrLocked) {
		t.Fatalf("sweep of a locked object %+v (%v)", sw, err)
	}
	sw, err = f.m.SweepObjects(f.ctx)
	if err != nil || !slices.Equal(sw.Deleted, []string{v1}) || sw.Referenced != 5 {
		t.Fatalf("sweep %+v (%v)", sw, err)
	}
	f.checkRemote(s1)
	if _, err := f.store.Stat(f.ctx, v1); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("unreferenced object left: %v", err)
	}
}

// failingStore fails the Put of the names fail matches, as a kill there.
type failingStore struct {
	storage.Store
	fail func(name string) bool
}

var errKilled = errors.New("killed")

func (s failingStore) Put(ctx context.Context, name string, body io.Reader, d digest.Digest) error {
	if s.fail(name) {
		return errKilled
	}
	return s.Store.Put(ctx, name, body, d)
}

// TestKillBetweenObjectsAndManifest: an upload cut off after its objects
// and before its manifest leaves the store as readers knew it (current,
// the listed snapshots, each downloads whole), its objects young so no
// sweep takes them, and the next attempt finishes by finding them.
func TestKillBetweenObjectsAndManifest(t *testing.T) { killScenario(t, newFixture(t)) }

func killScenario(t *testing.T, f *fixture) {
	f.publish(ids[0], "", 10, "table", "pd0", "up0")
	f.upload(ids[0])
	ref := f.publish(ids[1], ids[0], 20, "table v2", "pd0", "up0", "pd1", "up1")
	m := *f.m
	m.Store = failingStore{Store: f.store, fail: func(name string) bool { return strings.HasSuffix(name, snapshot.ManifestName) }}
	if _, err := m.Upload(f.ctx, ids[1], nil); !errors.Is(err, errKilled) {
		t.Fatalf("killed upload: %v", err)
	}
	if cur, _ := f.m.Current(f.ctx); cur != ids[0] {
		t.Fatalf("current %s after a killed upload", cur)
	}
	if l, _ := f.m.List(f.ctx); !slices.Equal(l, ids[:1]) {
		t.Fatalf("listed %v after a killed upload", l)
	}
	m2, _ := New(f.store, "main", filepath.Join(t.TempDir(), "main"), quiet())
	if _, err := m2.Download(f.ctx, ids[0], nil); err != nil {
		t.Fatal(err)
	}
	if sw, err := f.m.SweepObjects(f.ctx); err != nil || len(sw.Deleted) != 0 || sw.Young != 3 {
		t.Fatalf("sweep after a killed upload %+v (%v)", sw, err)
	}
	st := f.upload(ids[1])
	if st.Skipped != 5 || st.Uploaded != 1 {
		t.Fatalf("resumed upload %+v: want its objects found, the manifest sent", st)
	}
	f.checkRemote(ref)
	// Past the grace period, with the old snapshot removed, only what no
	// manifest refers to goes.
	if err := f.m.DeleteSnapshot(f.ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	f.later(2 * retention.ObjectGrace)
	if sw, err := f.m.SweepObjects(f.ctx); err != nil || len(sw.Deleted) != 1 {
		t.Fatalf("sweep %+v (%v): want the old table file's object deleted", sw, err)
	}
	f.checkRemote(ref)
}

// hookStore runs before ahead of the Put of the name it names.
type hookStore struct {
	storage.Store
	name   string
	before func()
}

func (s hookStore) Put(ctx context.Context, name string, body io.Reader, d digest.Digest) error {
	if name == s.name && s.before != nil {
		s.before()
	}
	return s.Store.Put(ctx, name, body, d)
}

// TestUploadRechecksWhenPrevRemoved: retention removes the previous
// snapshot (manifest, then an object only it referred to that is old)
// while the next one uploads relying on it: the upload states the objects
// it relied on again and sends the missing one.
func TestUploadRechecksWhenPrevRemoved(t *testing.T) {
	f := newFixture(t)
	f.publish(ids[0], "", 10, "table", "pd0", "up0")
	f.upload(ids[0])
	ref := f.publish(ids[1], ids[0], 20, "table", "pd0", "up0", "pd1", "up1")
	table := f.objectName(digest.Bytes([]byte("table")))
	m := *f.m
	m.Store = hookStore{Store: f.store, name: f.m.SnapshotName(ids[1], snapshot.ManifestName), before: func() {
		if err := f.m.DeleteSnapshot(f.ctx, ids[0]); err != nil {
			t.Error(err)
		}
		if err := f.store.Delete(f.ctx, table); err != nil {
			t.Error(err)
		}
	}}
	st, err := m.Upload(f.ctx, ids[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Uploaded != 4 {
		t.Fatalf("upload %+v: want the pair, the manifest and the removed table file sent", st)
	}
	f.checkRemote(ref)
}

// TestUploadTouchesOldObjectNoManifestVouches: a content object already on
// the store that the previous manifest does not refer to is relied on only
// after a Touch when it is past half the grace period.
func TestUploadTouchesOldObjectNoManifestVouches(t *testing.T) {
	f := newFixture(t)
	s := f.publish(ids[0], "", 10, "table", "pd0", "up0")
	d := digest.Bytes([]byte("table"))
	putAt(t, f, f.objectName(d), "table")
	f.later(retention.ObjectGrace)
	cs := &countingStore{Store: f.store}
	f.m.Store = cs
	st := f.upload(ids[0])
	f.m.Store = f.store
	if st.Skipped != 1 || cs.calls(f.objectName(d)) != "stat touch" {
		t.Fatalf("upload %+v, calls on the old object %q", st, cs.calls(f.objectName(d)))
	}
	f.checkRemote(s)
}

// TestUploadPutsEqualContentOnce: two files of one snapshot with the same
// bytes are one object, put once; the other counts as skipped.
func TestUploadPutsEqualContentOnce(t *testing.T) {
	f := newFixture(t)
	s := f.publish(ids[0], "", 10, "table", "same", "same")
	cs := &countingStore{Store: f.store}
	f.m.Store = cs
	st := f.upload(ids[0])
	f.m.Store = f.store
	if st.Uploaded != 3 || st.Skipped != 1 || st.Files != 4 {
		t.Fatalf("upload %+v: want table, one of the equal files and the manifest sent", st)
	}
	if got := cs.calls(f.objectName(digest.Bytes([]byte("same")))); got != "stat put stat" {
		t.Fatalf("calls on the shared object %q, want one put", got)
	}
	f.checkRemote(s)
}
