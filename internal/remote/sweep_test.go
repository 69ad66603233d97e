package remote

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// TestPartsOrphan: parts are removed only when their recorded owner run is
// known to be over and their snapshot is not waiting for its upload.
func TestPartsOrphan(t *testing.T) {
	owner := &snapshot.Owner{WorkflowID: "refresh-main", RunID: "r1"}
	for _, tc := range []struct {
		name    string
		f       PartsFolder
		run     RunState
		pending bool
		orphan  bool
	}{
		{"run ended", PartsFolder{ID: "x", Parts: 2, Owner: owner}, RunEnded, false, true},
		{"only the record left", PartsFolder{ID: "x", Owner: owner}, RunEnded, false, true},
		{"run running", PartsFolder{ID: "x", Parts: 2, Owner: owner}, RunRunning, false, false},
		{"run unknown", PartsFolder{ID: "x", Parts: 2, Owner: owner}, RunUnknown, false, false},
		{"no owner recorded", PartsFolder{ID: "x", Parts: 2}, RunEnded, false, false},
		{"published, upload pending", PartsFolder{ID: "x", Parts: 2, Owner: owner}, RunEnded, true, false},
	} {
		orphan, why := PartsOrphan(tc.f, tc.run, tc.pending)
		if orphan != tc.orphan || why == "" {
			t.Errorf("%s: orphan %v (%q), want %v", tc.name, orphan, why, tc.orphan)
		}
	}
}

// TestSweepParts: owner records are listed with their parts, an upload's
// and a failed run's cleanup leave the record, and SweepParts deletes the
// parts and then the record; while Object Lock retains a part (or the
// record), the record stays, so that a later sweep deletes what is left.
func TestSweepParts(t *testing.T) {
	f := newFixture(t)
	const a, b, c = "20261130T000000Z", "20261130T001000Z", "20261130T002000Z"
	ownerA := snapshot.Owner{WorkflowID: "refresh-main", RunID: "ra"}
	for _, id := range []string{a, b} {
		if err := f.m.PutPartsOwner(f.ctx, id, ownerA); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.m.PutPartsOwner(f.ctx, a, ownerA); err != nil { // again: idempotent
		t.Fatal(err)
	}
	putPart(t, f, a, "3-1", "app/t.parquet", "t")
	putPart(t, f, a, "4-1", "app/u.parquet", "u")
	putPart(t, f, c, "3-1", "app/t.parquet", "t") // no owner recorded
	if _, err := f.m.DiscardUnpublished(f.ctx, b); err != nil {
		t.Fatal(err)
	}
	checkFolders(t, f, []PartsFolder{{ID: a, Parts: 2, Owner: &ownerA}, {ID: b, Owner: &ownerA}, {ID: c, Parts: 1}})

	locked := f.m.PartName(a, "4-1", "app/u.parquet")
	m := *f.m
	m.Store = lockedStore{Store: f.store, locked: locked}
	for range 2 { // the retention on: the record stays, and again
		d, err := m.SweepParts(f.ctx, a, ownerA)
		if err != nil || !slices.Equal(d.Locked, []string{locked}) || d.Gone() || slices.Contains(d.Deleted, f.m.partsOwnerName(a)) {
			t.Fatalf("sweep of a locked part: %+v, %v", d, err)
		}
	}
	checkFolders(t, f, []PartsFolder{{ID: a, Parts: 1, Owner: &ownerA}, {ID: b, Owner: &ownerA}, {ID: c, Parts: 1}})
	if d, err := f.m.SweepParts(f.ctx, a, ownerA); err != nil || !d.Gone() || !slices.Equal(d.Deleted, []string{locked, f.m.partsOwnerName(a)}) {
		t.Fatalf("sweep once the retention is over: %+v, %v", d, err)
	}

	m.Store = lockedStore{Store: f.store, locked: f.m.partsOwnerName(b)}
	if d, err := m.SweepParts(f.ctx, b, ownerA); err != nil || d.Gone() || !slices.Equal(d.Locked, []string{f.m.partsOwnerName(b)}) {
		t.Fatalf("sweep of a locked record: %+v, %v", d, err)
	}
	if d, err := f.m.SweepParts(f.ctx, b, ownerA); err != nil || !d.Gone() || !slices.Equal(d.Deleted, []string{f.m.partsOwnerName(b)}) {
		t.Fatalf("sweep of a record alone: %+v, %v", d, err)
	}
	if got := names(t, f, "main/"+PartsDir+"/"); !slices.Equal(got, []string{f.m.PartName(c, "3-1", "app/t.parquet")}) {
		t.Errorf("left after the sweeps: %v", got)
	}
	if _, err := f.m.SweepParts(f.ctx, "../x", ownerA); err == nil {
		t.Error("a malformed id is accepted")
	}
}

// TestPartsFoldersJudgesEachFolderAlone: an owner record that cannot be
// parsed, or a name under parts/ that is not a snapshot id, is that
// folder's Err (the record of a name that is not an id never read); the
// other folders are listed as ever.
func TestPartsFoldersJudgesEachFolderAlone(t *testing.T) {
	f := newFixture(t)
	const a, c = "20261130T000000Z", "20261130T002000Z"
	owner := snapshot.Owner{WorkflowID: "refresh-main", RunID: "ra"}
	if err := f.m.PutPartsOwner(f.ctx, a, owner); err != nil {
		t.Fatal(err)
	}
	putPart(t, f, a, "3-1", "app/t.parquet", "t")
	putAt(t, f, f.m.partsOwnerName(c), "garbage")
	putAt(t, f, "main/"+PartsDir+"/notanid.owner", `{"WorkflowID":"refresh-main","RunID":"rb"}`)
	putAt(t, f, "main/"+PartsDir+"/other/3-1/app/t.parquet", "t")
	got, err := f.m.PartsFolders(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("parts folders %+v", got)
	}
	want := map[string]string{a: "", c: "not a run", "notanid": "malformed snapshot id", "other": "malformed snapshot id"}
	for _, g := range got {
		w, ok := want[g.ID]
		switch {
		case !ok:
			t.Errorf("unexpected folder %+v", g)
		case w == "" && (g.Err != nil || g.Owner == nil || *g.Owner != owner || g.Parts != 1):
			t.Errorf("folder %+v, want its owner and part", g)
		case w != "" && (g.Err == nil || !strings.Contains(g.Err.Error(), w) || g.Owner != nil):
			t.Errorf("folder %+v, want an error saying %q and no owner", g, w)
		}
	}
}

// lateStore puts a part of the snapshot whose owner record is deleted
// right after that delete, as an attempt of the owner run still putting
// would; with failList, the listings after it fail instead.
type lateStore struct {
	storage.Store
	record, part string
	failList     bool
	deleted      *bool
}

func (s lateStore) Delete(ctx context.Context, name string) error {
	if err := s.Store.Delete(ctx, name); err != nil || name != s.record {
		return err
	}
	*s.deleted = true
	if s.failList {
		return nil
	}
	return s.Store.Put(ctx, s.part, strings.NewReader("late"), digest.Bytes([]byte("late")))
}

func (s lateStore) List(ctx context.Context, prefix string, fn func(storage.Info) error) error {
	if s.failList && *s.deleted {
		return errors.New("connection reset")
	}
	return s.Store.List(ctx, prefix, fn)
}

// TestSweepPartsPutsTheRecordBackForALatePart: a part put between the
// sweep's listing and its delete of the owner record is found by the
// listing after that delete, and the record is put back, so that the part
// is never without an owner and the next sweep deletes it; a listing that
// fails then puts the record back too.
func TestSweepPartsPutsTheRecordBackForALatePart(t *testing.T) {
	f := newFixture(t)
	const a = "20261130T000000Z"
	owner := snapshot.Owner{WorkflowID: "refresh-main", RunID: "ra"}
	if err := f.m.PutPartsOwner(f.ctx, a, owner); err != nil {
		t.Fatal(err)
	}
	putPart(t, f, a, "3-1", "app/t.parquet", "t")
	late := f.m.PartName(a, "3-2", "app/t.parquet")
	m := *f.m
	m.Store = lateStore{Store: f.store, record: f.m.partsOwnerName(a), part: late, deleted: new(bool)}
	d, err := m.SweepParts(f.ctx, a, owner)
	if err != nil || d.Gone() || !slices.Equal(d.Late, []string{late}) {
		t.Fatalf("sweep with a late part: %+v, %v", d, err)
	}
	checkFolders(t, f, []PartsFolder{{ID: a, Parts: 1, Owner: &owner}})
	if d, err := f.m.SweepParts(f.ctx, a, owner); err != nil || !d.Gone() || !slices.Equal(d.Deleted, []string{late, f.m.partsOwnerName(a)}) {
		t.Fatalf("next sweep: %+v, %v", d, err)
	}

	if err := f.m.PutPartsOwner(f.ctx, a, owner); err != nil {
		t.Fatal(err)
	}
	m.Store = lateStore{Store: f.store, record: f.m.partsOwnerName(a), failList: true, deleted: new(bool)}
	if d, err := m.SweepParts(f.ctx, a, owner); err == nil {
		t.Fatalf("sweep whose second listing fails: %+v, no error", d)
	}
	checkFolders(t, f, []PartsFolder{{ID: a, Owner: &owner}})
}

// checkFolders requires f's parts folders to be want (ids, part counts,
// owners, no errors).
func checkFolders(t *testing.T, f *fixture, want []PartsFolder) {
	t.Helper()
	got, err := f.m.PartsFolders(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, want, func(x, y PartsFolder) bool {
		return x.ID == y.ID && x.Parts == y.Parts && x.Err == nil && (x.Owner == nil) == (y.Owner == nil) && (x.Owner == nil || *x.Owner == *y.Owner)
	}) {
		t.Fatalf("parts folders %+v, want %+v", got, want)
	}
}
