package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/spaceneed"
)

// TestSpaceRows: per step kind the least and greatest written ÷ estimate of
// the runs above the floor, with a verdict: met only when all are between
// 0.4 and 1.
func TestSpaceRows(t *testing.T) {
	step := func(kind string, est, written uint64) refreshRun {
		return refreshRun{space: &spaceneed.Step{Kind: kind, Estimate: est, Sure: true, Written: written}}
	}
	rows := spaceRows(slices.Values([]refreshRun{
		step("pair", 10<<20, 5<<20), step("pair", 10<<20, 7<<20), step("pair", spaceneed.Floor, 10),
		step("rewrite", 10<<20, 11<<20), {},
	}))
	if len(rows) != 2 {
		t.Fatalf("rows %+v, want pair and rewrite", rows)
	}
	if r := rows[0]; r.name != "space: pair written ÷ estimate" || r.value != "0.50–0.70" || r.target != "0.4–1.0" ||
		!strings.HasPrefix(r.note, "met; 2 runs") {
		t.Errorf("pair row %+v", r)
	}
	if r := rows[1]; r.name != "space: rewrite written ÷ estimate" || r.value != "1.10–1.10" || r.target != "0.4–1.0" || !strings.HasPrefix(r.note, "NOT met") {
		t.Errorf("rewrite row %+v", r)
	}
}
