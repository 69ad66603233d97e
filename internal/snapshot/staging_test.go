package snapshot

import (
	"os"
	"testing"
)

// TestStagingOwners: owners are recorded beside their folders, listed with
// them (an owner whose folder was published is listed alone, to be
// removed), and RemoveStaging removes folder and owner, refusing an id
// that is not one folder name.
func TestStagingOwners(t *testing.T) {
	dir := t.TempDir()
	if l, err := Stagings(dir); err != nil || len(l) != 0 {
		t.Fatalf("no staging folder yet: %v %v", l, err)
	}
	for _, id := range []string{"a", "b"} {
		if err := os.MkdirAll(Folder(dir).Staging(id), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	o := Owner{WorkflowID: "refresh-main", RunID: "r1"}
	for _, id := range []string{"a", "published"} {
		if err := WriteStagingOwner(dir, id, o); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Stagings(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*Owner{}
	for _, s := range l {
		got[s.ID] = s.Owner
	}
	if len(got) != 3 || got["a"] == nil || *got["a"] != o || got["b"] != nil || got["published"] == nil {
		t.Fatalf("stagings: %+v", l)
	}
	for _, id := range []string{"a", "published", "gone"} {
		if err := RemoveStaging(dir, id); err != nil {
			t.Fatal(err)
		}
	}
	if l, err := Stagings(dir); err != nil || len(l) != 1 || l[0].ID != "b" {
		t.Fatalf("after removing: %+v %v", l, err)
	}
	for _, bad := range []string{"", "..", "a/b", "."} {
		if err := RemoveStaging(dir, bad); err == nil {
			t.Errorf("RemoveStaging(%q) removed something", bad)
		}
	}
}
