package remote

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
)

var ids = []string{"20261129T061500Z", "20261129T062000Z", "20261129T062500Z"}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fixture is a local source folder and a store (a local folder here; the
// S3 backend is exercised end to end in temporal/e2e).
type fixture struct {
	t     *testing.T
	ctx   context.Context
	dir   string
	store storage.Store
	m     *Mirror
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	store, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return newFixtureOn(t, store)
}

// newFixtureOn is a fixture whose store is store.
func newFixtureOn(t *testing.T, store storage.Store) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: context.Background(), dir: filepath.Join(t.TempDir(), "main"), store: store}
	var err error
	if f.m, err = New(store, "main", f.dir, quiet()); err != nil {
		t.Fatal(err)
	}
	return f
}

// publish publishes snapshot id with table db.t: its table file holds
// table, its chain the files of chain in order; files of prev whose content
// is unchanged are hard-linked from it, as a refresh does.
func (f *fixture) publish(id, prev string, seq uint64, table string, chain ...string) *snapshot.Snapshot {
	t := f.t
	t.Helper()
	b, err := snapshot.NewBuilder(f.dir, id)
	if err != nil {
		t.Fatal(err)
	}
	var ps *snapshot.Snapshot
	if prev != "" {
		if ps, err = snapshot.OpenSnapshot(snapshot.Folder(f.dir).Snapshot(prev)); err != nil {
			t.Fatal(err)
		}
	}
	add := func(rel, content string) {
		if ps != nil {
			if d, ok := ps.Manifest.Files[rel]; ok {
				if old, _ := os.ReadFile(ps.Path(rel)); string(old) == content {
					if err := b.Link(rel, ps.Path(rel), d); err != nil {
						t.Fatal(err)
					}
					return
				}
			}
		}
		if _, err := b.WriteFile(rel, func(w io.Writer) error { _, err := io.WriteString(w, content); return err }); err != nil {
			t.Fatal(err)
		}
	}
	mt := snapshot.ManifestTable{Schema: "db", Table: "t", File: "db/t.parquet", Kind: snapshot.KindDelta}
	add(mt.File, table)
	for i, c := range chain {
		rel := "db/t." + []string{"000000", "000001", "000002"}[i/2] + []string{".posdel", ".upserts"}[i%2]
		add(rel, c)
		mt.Chain = append(mt.Chain, rel)
	}
	man := snapshot.Manifest{Source: "main", Position: binlogpos.Position{Seq: seq}, Kind: snapshot.SnapshotFull,
		Tables: []snapshot.ManifestTable{mt}}
	if prev != "" {
		man.Kind, man.Prev = snapshot.SnapshotRefresh, prev
	}
	if err := b.Publish(man); err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.OpenSnapshot(snapshot.Folder(f.dir).Snapshot(id))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// objectName is the content object of d.
func (f *fixture) objectName(d digest.Digest) string {
	f.t.Helper()
	name, err := f.m.ObjectName(d)
	if err != nil {
		f.t.Fatal(err)
	}
	return name
}

func (f *fixture) upload(id string) UploadStats {
	f.t.Helper()
	st, err := f.m.Upload(f.ctx, id, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return st
}

// checkRemote requires every file of s and its manifest bytes on the store.
func (f *fixture) checkRemote(s *snapshot.Snapshot) {
	t := f.t
	t.Helper()
	id := s.Manifest.SnapshotID
	for rel, d := range s.Manifest.Files {
		ok, err := f.m.holds(f.ctx, f.objectName(digest.Digest(d)), digest.Digest(d))
		if err != nil || !ok {
			t.Fatalf("%s/%s not on the store with its digest (%v)", id, rel, err)
		}
	}
	_, mb, err := f.m.ReadManifest(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	local, _ := os.ReadFile(filepath.Join(s.Dir, snapshot.ManifestName))
	if string(mb) != string(local) {
		t.Fatalf("remote manifest of %s differs from the local one", id)
	}
	if ok, err := f.m.Confirmed(id); err != nil || !ok {
		t.Fatalf("%s not confirmed (%v)", id, err)
	}
}

func TestUploadSendsNewFilesAndFindsSharedOnes(t *testing.T) {
	sharedFilesScenario(t, newFixture(t))
}

// sharedFilesScenario: a full backup's upload sends every file; a
// refresh's sends its new pair and manifest and finds the rest by content
// with one Stat each (no copy, touch or read); again, it sends nothing.
func sharedFilesScenario(t *testing.T, f *fixture) {
	big := strings.Repeat("table file ", 1000)
	full := f.publish(ids[0], "", 10, big, "pd0", "up0")
	var last Progress
	st, err := f.m.Upload(f.ctx, ids[0], func(p Progress) { last = p })
	if err != nil {
		t.Fatal(err)
	}
	mb, _ := os.ReadFile(filepath.Join(full.Dir, snapshot.ManifestName))
	want := UploadStats{SnapshotID: ids[0], Files: 4, Uploaded: 4, BytesUploaded: int64(len(big) + 6 + len(mb)), Current: ids[0]}
	if st != want {
		t.Fatalf("full backup upload %+v, want %+v", st, want)
	}
	if last.FilesDone != 4 || last.Files != 4 || last.BytesDone != last.Bytes || last.Bytes != want.BytesUploaded {
		t.Fatalf("last progress %+v", last)
	}
	f.checkRemote(full)
	if cur, err := f.m.Current(f.ctx); err != nil || cur != ids[0] {
		t.Fatalf("remote current %q (%v)", cur, err)
	}

	// A refresh that wrote one pair: the pair and the manifest are sent,
	// the rest is found by its content: one Stat each, no copy, no read.
	ref := f.publish(ids[1], ids[0], 20, big, "pd0", "up0", "pd1", "up1")
	cs := &countingStore{Store: f.store}
	f.m.Store = cs
	st = f.upload(ids[1])
	f.m.Store = f.store
	mb, _ = os.ReadFile(filepath.Join(ref.Dir, snapshot.ManifestName))
	want = UploadStats{SnapshotID: ids[1], Files: 6, Uploaded: 3, Skipped: 3, BytesUploaded: int64(6 + len(mb)),
		BytesSkipped: int64(len(big) + 6), Current: ids[1]}
	if st != want {
		t.Fatalf("refresh upload %+v, want %+v", st, want)
	}
	for _, rel := range []string{"db/t.parquet", "db/t.000000.posdel", "db/t.000000.upserts"} {
		name := f.objectName(digest.Digest(ref.Manifest.Files[rel]))
		if got := cs.calls(name); got != "stat" {
			t.Errorf("unchanged %s (%s): store calls %q, want one stat", rel, name, got)
		}
	}
	if n := cs.count("copy") + cs.count("touch"); n != 0 {
		t.Errorf("the refresh's upload made %d copies or touches: %v", n, cs.log)
	}
	f.checkRemote(ref)
	// Uploading it again sends nothing.
	st = f.upload(ids[1])
	if st.Uploaded != 0 || st.Copied != 0 || st.Skipped != 6 || st.BytesUploaded != 0 {
		t.Fatalf("second upload %+v", st)
	}
}

func TestUploadResumesAndCatchesUp(t *testing.T) {
	f := newFixture(t)
	f.publish(ids[0], "", 10, "table", "pd0", "up0")
	f.publish(ids[1], ids[0], 20, "table", "pd0", "up0", "pd1", "up1")
	pending, err := f.m.Pending("")
	if err != nil || !slices.Equal(pending, ids[:2]) {
		t.Fatalf("pending %v (%v)", pending, err)
	}
	if p, _ := f.m.Pending(ids[0]); !slices.Equal(p, ids[:1]) {
		t.Fatalf("pending up to %s: %v", ids[0], p)
	}
	// An earlier attempt got the table file up, not the manifest.
	d := digest.Digest{SHA256: sha256Hex([]byte("table")), Size: 5}
	if err := f.store.Put(f.ctx, f.objectName(d), strings.NewReader("table"), d); err != nil {
		t.Fatal(err)
	}
	st := f.upload(ids[0])
	if st.Skipped != 1 || st.Uploaded != 3 {
		t.Fatalf("resumed upload %+v", st)
	}
	f.upload(ids[1])
	if p, _ := f.m.Pending(""); len(p) != 0 {
		t.Fatalf("pending after the uploads: %v", p)
	}
	// A marker written for another store does not count.
	other, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m2, _ := New(other, "main", f.dir, quiet())
	if ok, _ := m2.Confirmed(ids[0]); ok {
		t.Fatal("confirmed on a store it was never uploaded to")
	}
	if err := f.m.Forget(ids[0]); err != nil {
		t.Fatal(err)
	}
	if p, _ := f.m.Pending(""); !slices.Equal(p, ids[:1]) {
		t.Fatalf("pending after Forget: %v", p)
	}
}

func TestUploadLeavesANewerCurrent(t *testing.T) {
	f := newFixture(t)
	f.publish(ids[0], "", 10, "table", "pd0", "up0")
	f.publish(ids[1], ids[0], 20, "table", "pd0", "up0", "pd1", "up1")
	// The newer snapshot goes up first (its prev is not there: all sent).
	st := f.upload(ids[1])
	if st.Copied != 0 || st.Current != ids[1] {
		t.Fatalf("upload of the newer one %+v", st)
	}
	st = f.upload(ids[0])
	if st.Current != ids[1] {
		t.Fatalf("an older upload moved current: %+v", st)
	}
	if cur, _ := f.m.Current(f.ctx); cur != ids[1] {
		t.Fatalf("remote current %s", cur)
	}
	if ok, _ := f.m.Confirmed(ids[0]); !ok {
		t.Fatal("the older snapshot is not confirmed")
	}
}

func TestUploadRefusesAlteredLocalFile(t *testing.T) {
	f := newFixture(t)
	s := f.publish(ids[0], "", 10, "table", "pd0", "up0")
	if err := os.WriteFile(s.Path("db/t.000000.posdel"), []byte("PD0"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := f.m.Upload(f.ctx, ids[0], nil)
	var de *storage.DigestError
	if !errors.As(err, &de) {
		t.Fatalf("upload of an altered file: %v", err)
	}
	if _, _, err := f.m.ReadManifest(f.ctx, ids[0]); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("manifest went up: %v", err)
	}
	if ok, _ := f.m.Confirmed(ids[0]); ok {
		t.Fatal("confirmed")
	}
	if cur, _ := f.m.Current(f.ctx); cur != "" {
		t.Fatalf("remote current %s", cur)
	}
}

func TestDownloadInstallsAndChecksDigests(t *testing.T) {
	f := newFixture(t)
	f.publish(ids[0], "", 10, "table", "pd0", "up0")
	s := f.publish(ids[1], ids[0], 20, "table", "pd0", "up0", "pd1", "up1")
	f.upload(ids[0])
	f.upload(ids[1])

	// A new machine: an empty source folder.
	dir := filepath.Join(t.TempDir(), "main")
	m, _ := New(f.store, "main", dir, quiet())
	// A corrupted object is refused and nothing is installed.
	bad := filepath.Join(f.store.(*storage.Local).Root(), filepath.FromSlash(f.objectName(digest.Bytes([]byte("up1")))))
	if err := os.Remove(bad); err != nil { // the local store hard-links: replace, do not write through
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("UP1"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := m.Download(f.ctx, ids[1], nil)
	var de *snapshot.DigestError
	if !errors.As(err, &de) || de.File != "db/t.000001.upserts" {
		t.Fatalf("download of a corrupted object: %v", err)
	}
	if ids, _ := snapshot.ListSnapshots(dir); len(ids) != 0 {
		t.Fatalf("installed %v", ids)
	}
	if err := os.WriteFile(bad, []byte("up1"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := m.Download(f.ctx, ids[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	// The files fetched by the failed attempt are kept.
	if st.Files != 6 || st.Kept+st.Downloaded != 6 || st.Kept == 0 {
		t.Fatalf("download %+v", st)
	}
	got, err := snapshot.OpenSnapshot(filepath.Join(dir, snapshot.SnapshotsDir, ids[1]))
	if err != nil {
		t.Fatal(err)
	}
	if err := got.VerifyAll(); err != nil {
		t.Fatal(err)
	}
	local, _ := os.ReadFile(filepath.Join(s.Dir, snapshot.ManifestName))
	fetched, _ := os.ReadFile(filepath.Join(got.Dir, snapshot.ManifestName))
	if string(local) != string(fetched) {
		t.Fatal("downloaded manifest differs")
	}
	if ok, _ := m.Confirmed(ids[1]); !ok {
		t.Fatal("downloaded snapshot not confirmed")
	}
	if _, err := os.Stat(snapshot.DownloadPath(dir, ids[1])); !os.IsNotExist(err) {
		t.Fatalf("download folder left: %v", err)
	}
	st, err = m.Download(f.ctx, ids[1], nil)
	if err != nil || !st.Local {
		t.Fatalf("second download %+v (%v)", st, err)
	}
	remote, err := m.List(f.ctx)
	if err != nil || !slices.Equal(remote, ids[:2]) {
		t.Fatalf("remote snapshots %v (%v)", remote, err)
	}
	if _, err := m.Download(f.ctx, ids[2], nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("download of a snapshot that is not there: %v", err)
	}
}

func TestUploadRefusesAnotherSnapshotUnderTheSameID(t *testing.T) {
	f := newFixture(t)
	f.publish(ids[0], "", 10, "table", "pd0", "up0")
	if taken, err := f.m.Taken(f.ctx, ids[0]); err != nil || taken {
		t.Fatalf("taken %v (%v) before the upload", taken, err)
	}
	f.upload(ids[0])
	if taken, err := f.m.Taken(f.ctx, ids[0]); err != nil || !taken {
		t.Fatalf("taken %v (%v) after the upload", taken, err)
	}
	if taken, _ := f.m.Taken(f.ctx, ids[1]); taken {
		t.Fatal("an id never uploaded is taken")
	}
	// The folder is lost and a new snapshot gets the same id.
	g := newFixture(t)
	g.store = f.store
	g.m, _ = New(f.store, "main", g.dir, quiet())
	g.publish(ids[0], "", 30, "other table", "pd", "up")
	_, err := g.m.Upload(g.ctx, ids[0], nil)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("upload over another snapshot: %v", err)
	}
	f.checkRemote(snapshotAt(t, f.dir, ids[0]))
}

func snapshotAt(t *testing.T, dir, id string) *snapshot.Snapshot {
	t.Helper()
	s, err := snapshot.OpenSnapshot(snapshot.Folder(dir).Snapshot(id))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
