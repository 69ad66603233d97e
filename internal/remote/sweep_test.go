package remote

import (
	"slices"
	"testing"

	"github.com/dbtrail/dbtrail/internal/snapshot"
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
// parts and then the record, an Object Lock refusal recorded.
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
	got, err := f.m.PartsFolders(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []PartsFolder{{ID: a, Parts: 2, Owner: &ownerA}, {ID: b, Owner: &ownerA}, {ID: c, Parts: 1}}
	if !slices.EqualFunc(got, want, func(x, y PartsFolder) bool {
		return x.ID == y.ID && x.Parts == y.Parts && (x.Owner == nil) == (y.Owner == nil) && (x.Owner == nil || *x.Owner == *y.Owner)
	}) {
		t.Fatalf("parts folders %+v, want %+v", got, want)
	}

	locked := f.m.PartName(a, "4-1", "app/u.parquet")
	m := *f.m
	m.Store = lockedStore{Store: f.store, locked: locked}
	d, err := m.SweepParts(f.ctx, a)
	if err != nil || len(d.Deleted) != 2 || !slices.Equal(d.Locked, []string{locked}) {
		t.Fatalf("sweep: %+v, %v", d, err)
	}
	if d, err = f.m.SweepParts(f.ctx, b); err != nil || !slices.Equal(d.Deleted, []string{f.m.partsOwnerName(b)}) {
		t.Fatalf("sweep of a record alone: %+v, %v", d, err)
	}
	if got := names(t, f, "main/"+PartsDir+"/"); !slices.Equal(got, []string{locked, f.m.PartName(c, "3-1", "app/t.parquet")}) {
		t.Errorf("left after the sweeps: %v", got)
	}
	if _, err := f.m.SweepParts(f.ctx, "../x"); err == nil {
		t.Error("a malformed id is accepted")
	}
	putAt(t, f, f.m.partsOwnerName(c), "garbage")
	if _, err := f.m.PartsFolders(f.ctx); err == nil {
		t.Error("an unreadable owner record is accepted")
	}
}
