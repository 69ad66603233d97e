package snapshot

import (
	"testing"

	"github.com/dbtrail/dbtrail/internal/digest"
)

// TestManifestSizes: a table's size is its table file and chain as the
// manifest records them; files it does not list count 0.
func TestManifestSizes(t *testing.T) {
	m := Manifest{Tables: []ManifestTable{{Schema: "db", Table: "t", File: "f", Chain: []string{"p", "u"}}},
		Files: map[string]digest.Digest{"f": {Size: 10}, "p": {Size: 2}, "u": {Size: 3}, "other": {Size: 100}}}
	if got := m.TableSize("db", "t"); got != 15 {
		t.Errorf("TableSize %d, want 15", got)
	}
	if got := m.TableSize("db", "gone"); got != 0 {
		t.Errorf("TableSize of a table not held %d, want 0", got)
	}
	if got := m.FilesSize("p", "other", "missing"); got != 102 {
		t.Errorf("FilesSize %d, want 102", got)
	}
}
