package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestKeptRows: a run of some benchmarks keeps the other benchmarks' rows,
// empty targets included (archived's rows are not archive's), refresh's
// upload rows and space rows too, each with the run that measured it; a
// run of refresh and space replaces theirs.
func TestKeptRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.md")
	const old = "2026-12-01T00:00:00Z, commit 0123456789ab"
	var rows []stamped
	for _, r := range []result{{"capture: rate", "1 events/s", "", "note"}, {"refresh: ratio", "0.1", "≤ 0.2", "met"},
		{"archived: ratio history / whole hours (S3)", "0.1", "≤ 0.15", "met"}, {"upload: ratio bytes", "0.1", "≤ 0.2", "met"},
		{"space: convert written ÷ estimate", "0.5", "0.4–1.0", "met"}, {"archive: ratio archive / capture", "1.2", "≥ 1.0", "met"}} {
		rows = append(rows, stamped{r, old})
	}
	rows[0].run = "2026-11-30T00:00:00Z, commit not recorded"
	if err := write(path, "2026-12-02T00:00:00Z, commit fedcba987654", rows); err != nil {
		t.Fatal(err)
	}
	got := keptRows(path, map[string]bool{"archive": true})
	if !reflect.DeepEqual(got, rows[:5]) {
		t.Fatalf("kept %+v", got)
	}
	if got := keptRows(path, map[string]bool{"refresh": true, "space": true}); !reflect.DeepEqual(got, []stamped{rows[0], rows[2], rows[5]}) {
		t.Fatalf("kept %+v running refresh and space", got)
	}
	if got := keptRows(filepath.Join(t.TempDir(), "none.md"), nil); got != nil {
		t.Fatalf("kept %+v of a missing file", got)
	}
	os.Remove(path)
}

// TestKeptRowsOfAFileWithoutRuns: rows of a results file written before
// the run column say they were measured at or before that file's header
// date by a commit not recorded; the header names this run's date and
// commit.
func TestKeptRowsOfAFileWithoutRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.md")
	old := "# dbtrail benchmarks\n\n2026-12-07T01:01:00Z, 2 cores, go1.26.8\n\n| measure | value | target | note |\n|---|---|---|---|\n" +
		"| restore: rows/s | 0.97x | ≥ 1.0 | NOT met; 1000000 rows |\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	got := keptRows(path, map[string]bool{"ddl": true})
	want := []stamped{{result{"restore: rows/s", "0.97x", "≥ 1.0", "NOT met; 1000000 rows"}, "at or before 2026-12-07T01:01:00Z, commit not recorded"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("kept %+v, want %+v", got, want)
	}
	this := "2026-12-08T00:00:00Z, commit fedcba987654"
	text := table(this, append(got, stamped{result{"ddl: x", "1", "", "n"}, this}))
	for _, s := range []string{"\n" + this + ", ", "| ddl: x | 1 |  | n | " + this + " |", "| NOT met; 1000000 rows | at or before 2026-12-07T01:01:00Z, commit not recorded |"} {
		if !strings.Contains(text, s) {
			t.Errorf("results file does not hold %q:\n%s", s, text)
		}
	}
}

// TestResultsFileKeepsEveryRow: the committed results file parses whole:
// every row of its table is kept by a run of no benchmark, with its run.
func TestResultsFileKeepsEveryRow(t *testing.T) {
	path := filepath.Join("..", "..", "bench-results", "results.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Count(string(b), "\n| ") - 1 // the header row
	got := keptRows(path, map[string]bool{})
	if len(got) != want || want < 50 {
		t.Fatalf("kept %d of %d rows of %s", len(got), want, path)
	}
	for _, r := range got {
		if r.run == "" {
			t.Fatalf("row %q has no run", r.name)
		}
	}
}
