package remote

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// lockedStore refuses, as Object Lock does, to delete the name locked.
type lockedStore struct {
	storage.Store
	locked string
}

func (s lockedStore) Delete(ctx context.Context, name string) error {
	if name == s.locked {
		return storage.ErrLocked
	}
	return s.Store.Delete(ctx, name)
}

// names lists the store's objects under prefix.
func names(t *testing.T, f *fixture, prefix string) []string {
	t.Helper()
	var out []string
	if err := f.store.List(f.ctx, prefix, func(i storage.Info) error { out = append(out, i.Name); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// putAt stores content under the store's name.
func putAt(t *testing.T, f *fixture, name, content string) {
	t.Helper()
	if err := f.store.Put(f.ctx, name, strings.NewReader(content), digest.Bytes([]byte(content))); err != nil {
		t.Fatal(err)
	}
}

// putPart puts a file as a shared table's attempt does.
func putPart(t *testing.T, f *fixture, id, attempt, rel, content string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "part")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := digest.File(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.m.PutPart(f.ctx, id, attempt, rel, p, d); err != nil {
		t.Fatal(err)
	}
}

// TestUploadCopiesPartsAndDropsThem: a file a shared table's attempt put
// with the manifest's digest is copied inside the store, one with other
// bytes (a stale attempt) is not; the parts go once the snapshot is up.
func TestUploadCopiesPartsAndDropsThem(t *testing.T) {
	f := newFixture(t)
	const id = "20261130T000000Z"
	s := f.publish(id, "", 10, "1,a\n")
	putPart(t, f, id, "7-1", "db/t.parquet", "stale bytes")
	putPart(t, f, id, "9-1", "db/t.parquet", "1,a\n")
	fetched := filepath.Join(t.TempDir(), "t.parquet")
	if err := f.m.FetchPart(f.ctx, id, "9-1", "db/t.parquet", fetched, digest.Bytes([]byte("1,a\n"))); err != nil {
		t.Fatal(err)
	}
	if err := f.m.FetchPart(f.ctx, id, "7-1", "db/t.parquet", fetched+"2", digest.Bytes([]byte("1,a\n"))); err == nil {
		t.Error("a part with other bytes fetched without error")
	}
	st := f.upload(id)
	if st.Copied != 1 {
		t.Errorf("upload stats %+v: want the table file copied from its part", st)
	}
	f.checkRemote(s)
	if got := names(t, f, "main/"+PartsDir+"/"); len(got) != 0 {
		t.Errorf("parts left after the upload: %v", got)
	}
}

// TestDiscardUnpublished: the objects of a snapshot id without a manifest
// are deleted (again: nothing to do), a locked one is recorded and left,
// and a published snapshot is never touched.
func TestDiscardUnpublished(t *testing.T) {
	f := newFixture(t)
	f.publish("20261130T000000Z", "", 10, "1,a\n")
	f.upload("20261130T000000Z")
	const failed = "20261130T001000Z"
	putAt(t, f, f.m.SnapshotName(failed, "app/t.parquet"), "t") // an earlier release's shared table
	putAt(t, f, f.m.SnapshotName(failed, "app/u.parquet"), "u")
	putPart(t, f, failed, "3-1", "app/v.parquet", "v")
	putPart(t, f, "20261130T000000Z", "3-1", "app/v.parquet", "v")

	d, err := f.m.DiscardUnpublished(f.ctx, "20261130T000000Z")
	if err != nil || !d.Published || !slices.Equal(d.Deleted, []string{f.m.PartName("20261130T000000Z", "3-1", "app/v.parquet")}) {
		t.Fatalf("published snapshot: %+v, %v", d, err)
	}
	published := names(t, f, f.m.SnapshotName("20261130T000000Z", "")+"/")
	if len(published) != 1 {
		t.Fatalf("published snapshot's objects: %v", published)
	}

	locked := f.m.SnapshotName(failed, "app/u.parquet")
	m := *f.m
	m.Store = lockedStore{Store: f.store, locked: locked}
	d, err = m.DiscardUnpublished(f.ctx, failed)
	if err != nil || d.Published || len(d.Deleted) != 2 || !slices.Equal(d.Locked, []string{locked}) {
		t.Fatalf("locked object: %+v, %v", d, err)
	}
	if got := names(t, f, f.m.SnapshotName(failed, "")+"/"); !slices.Equal(got, []string{locked}) {
		t.Fatalf("after a refused delete: %v", got)
	}
	for range 2 { // the retention over, then once more: nothing to do
		if d, err = f.m.DiscardUnpublished(f.ctx, failed); err != nil || d.Published || len(d.Locked) != 0 {
			t.Fatalf("again: %+v, %v", d, err)
		}
		if got := append(names(t, f, f.m.SnapshotName(failed, "")+"/"), names(t, f, "main/"+PartsDir+"/")...); len(got) != 0 {
			t.Errorf("objects of the failed id left: %v", got)
		}
	}
	if got := names(t, f, f.m.SnapshotName("20261130T000000Z", "")+"/"); !slices.Equal(got, published) {
		t.Errorf("published snapshot's objects changed: %v, were %v", got, published)
	}
	if _, err := f.m.DiscardUnpublished(f.ctx, "bad"); err == nil {
		t.Error("a malformed id is accepted")
	}
}
