package remote

import (
	"testing"

	"github.com/dbtrail/dbtrail/internal/storage"
)

// TestDeleteSnapshot: a deleted remote snapshot leaves no object under its
// prefix and no manifest; another snapshot's objects stay.
func TestDeleteSnapshot(t *testing.T) {
	f := newFixture(t)
	f.publish("20261130T000000Z", "", 10, "1,a\n")
	f.upload("20261130T000000Z")
	s2 := f.publish("20261130T001000Z", "20261130T000000Z", 20, "1,a\n2,b\n", "p1")
	f.upload("20261130T001000Z")
	if err := f.m.DeleteSnapshot(f.ctx, "20261130T000000Z"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.m.ReadManifest(f.ctx, "20261130T000000Z"); err == nil {
		t.Error("the manifest of a deleted snapshot still reads")
	}
	var left []string
	if err := f.store.List(f.ctx, f.m.SnapshotName("20261130T000000Z", "")+"/", func(i storage.Info) error {
		left = append(left, i.Name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Errorf("objects left: %v", left)
	}
	f.checkRemote(s2)
	if err := f.m.DeleteSnapshot(f.ctx, "20261130T000000Z"); err != nil {
		t.Errorf("deleting a deleted snapshot again: %v", err)
	}
}
