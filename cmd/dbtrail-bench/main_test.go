package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestKeptRows: a run of some benchmarks keeps the other benchmarks' rows,
// empty targets included (archived's rows are not archive's).
func TestKeptRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.md")
	rows := []result{{"capture: rate", "1 events/s", "", "note"}, {"refresh: ratio", "0.1", "≤ 0.2", "met"},
		{"archived: ratio history / whole hours (S3)", "0.1", "≤ 0.15", "met"}, {"archive: ratio archive / capture", "1.2", "≥ 1.0", "met"}}
	if err := write(path, rows); err != nil {
		t.Fatal(err)
	}
	got := keptRows(path, map[string]bool{"archive": true})
	if !reflect.DeepEqual(got, rows[:3]) {
		t.Fatalf("kept %+v", got)
	}
	if got := keptRows(filepath.Join(t.TempDir(), "none.md"), nil); got != nil {
		t.Fatalf("kept %+v of a missing file", got)
	}
	os.Remove(path)
}
