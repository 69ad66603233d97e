package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestKeptRows: a run of some benchmarks keeps the other benchmarks' rows,
// empty targets included (archived's rows are not archive's), refresh's
// upload rows and room's rows too; a run of refresh and room replaces theirs.
func TestKeptRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.md")
	rows := []result{{"capture: rate", "1 events/s", "", "note"}, {"refresh: ratio", "0.1", "≤ 0.2", "met"},
		{"archived: ratio history / whole hours (S3)", "0.1", "≤ 0.15", "met"}, {"upload: ratio bytes", "0.1", "≤ 0.2", "met"},
		{"room: convert written ÷ estimate", "0.5", "0.4–1.0", "within target"}, {"archive: ratio archive / capture", "1.2", "≥ 1.0", "met"}}
	if err := write(path, rows); err != nil {
		t.Fatal(err)
	}
	got := keptRows(path, map[string]bool{"archive": true})
	if !reflect.DeepEqual(got, rows[:5]) {
		t.Fatalf("kept %+v", got)
	}
	if got := keptRows(path, map[string]bool{"refresh": true, "room": true}); !reflect.DeepEqual(got, []result{rows[0], rows[2], rows[5]}) {
		t.Fatalf("kept %+v running refresh and room", got)
	}
	if got := keptRows(filepath.Join(t.TempDir(), "none.md"), nil); got != nil {
		t.Fatalf("kept %+v of a missing file", got)
	}
	os.Remove(path)
}
