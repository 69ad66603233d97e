package snapshot

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestPartialSnapshotNeverCurrentNorListed: a partial snapshot is finished
// under .partial/ beside a published one: current and ListSnapshots do not
// change, OpenPartial reads it (digests hold), a retry with the same
// manifest succeeds and one with another fails, Publish refuses the kind,
// and its id is taken for NewSnapshotID.
func TestPartialSnapshotNeverCurrentNorListed(t *testing.T) {
	dir := t.TempDir()
	rows, _ := allTypesRows()
	b, m := build(t, dir, "20261129T060000Z", 5, rows)
	if err := b.Publish(m); err != nil {
		t.Fatal(err)
	}
	pb, pm := build(t, dir, "20261129T070000Z", 9, rows[:2])
	pm.Kind = SnapshotPartial
	if err := pb.Publish(pm); err == nil || !strings.Contains(err.Error(), "never made current") {
		t.Fatalf("Publish of kind partial: want refused, got %v", err)
	}
	if err := pb.FinishPartial(pm); err != nil {
		t.Fatal(err)
	}
	if err := pb.FinishPartial(pm); err != nil {
		t.Fatalf("retry of a finished partial: %v", err)
	}
	if cur := checkCurrent(t, dir); cur != "20261129T060000Z" {
		t.Fatalf("current is %s after a partial snapshot", cur)
	}
	if ids, err := ListSnapshots(dir); err != nil || !slices.Equal(ids, []string{"20261129T060000Z"}) {
		t.Fatalf("ListSnapshots %v %v: the partial snapshot must not be listed", ids, err)
	}
	if ids, err := ListPartials(dir); err != nil || !slices.Equal(ids, []string{"20261129T070000Z"}) {
		t.Fatalf("ListPartials %v %v", ids, err)
	}
	s, err := OpenPartial(dir, "20261129T070000Z")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.VerifyAll(); err != nil || s.Manifest.Tables[0].Rows != 2 || s.Manifest.Position.Seq != 9 {
		t.Fatalf("partial snapshot %+v: %v", s.Manifest.Tables, err)
	}
	if _, err := OpenPartial(dir, "20261129T060000Z"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenPartial of a published snapshot: want not exist, got %v", err)
	}
	if taken, err := ExistsIn(dir)("20261129T070000Z"); err != nil || !taken {
		t.Fatalf("a partial snapshot's id must be taken: %v %v", taken, err)
	}
	other := pm
	other.Tables[0].Rows++
	pb2, err := AttachBuilder(dir, "20261129T070000Z")
	if err != nil {
		t.Fatal(err)
	}
	if err := pb2.FinishPartial(other); err == nil {
		t.Fatal("finishing a finished partial snapshot with another manifest must fail")
	}
	os.RemoveAll(Folder(dir).Staging("20261129T070000Z"))
}

// TestRemovePartial removes a partial snapshot once (again is success),
// refuses a folder under .partial/ that is not a partial snapshot and
// never touches a published one; RemoveStalePartials removes by age.
func TestRemovePartial(t *testing.T) {
	dir := t.TempDir()
	rows, _ := allTypesRows()
	b, m := build(t, dir, "20261129T060000Z", 5, rows)
	if err := b.Publish(m); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"20261129T070000Z", "20261130T080000Z"} {
		pb, pm := build(t, dir, id, 9, rows[:1])
		pm.Kind = SnapshotPartial
		if err := pb.FinishPartial(pm); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemovePartial(dir, "20261129T060000Z"); err != nil {
		t.Fatalf("no partial of that id: nothing to remove, got %v", err)
	}
	if cur := checkCurrent(t, dir); cur != "20261129T060000Z" {
		t.Fatalf("current %s", cur)
	}
	if err := RemovePartial(dir, "../snapshots/20261129T060000Z"); err == nil {
		t.Fatal("a path for an id must be refused")
	}
	// A full manifest copied under .partial/ is not a partial snapshot.
	fake := Folder(dir).Partial("20261129T090000Z")
	must(t, os.MkdirAll(fake, 0o700))
	man, err := os.ReadFile(Folder(dir).Snapshot("20261129T060000Z") + "/" + ManifestName)
	must(t, err)
	must(t, os.WriteFile(fake+"/"+ManifestName, []byte(strings.ReplaceAll(string(man), "20261129T060000Z", "20261129T090000Z")), 0o600))
	if err := RemovePartial(dir, "20261129T090000Z"); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("a full manifest under .partial/: want refused, got %v", err)
	}
	must(t, os.RemoveAll(fake))
	removed, err := RemoveStalePartials(dir, mustTime(t, "2026-11-30T08:00:00Z"), PartialMaxAge)
	if err != nil || !slices.Equal(removed, []string{"20261129T070000Z"}) {
		t.Fatalf("stale partials removed %v %v", removed, err)
	}
	must(t, RemovePartial(dir, "20261130T080000Z"))
	must(t, RemovePartial(dir, "20261130T080000Z"))
	if ids, err := ListPartials(dir); err != nil || len(ids) != 0 {
		t.Fatalf("partials left %v %v", ids, err)
	}
	if cur := checkCurrent(t, dir); cur != "20261129T060000Z" {
		t.Fatalf("current %s", cur)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
