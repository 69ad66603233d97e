package workers

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/payload"
)

// TestArchitectureDocListsTheSchedules: docs/architecture.md's schedule
// table lists exactly payload.Schedules, each with its ID for a source,
// the workflow it starts, its default interval ("off (0)" for none) and
// its minimum ("fixed" when it is the default), and the sentence before it
// counts them.
func TestArchitectureDocListsTheSchedules(t *testing.T) {
	b, err := os.ReadFile(architectureDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	rows := map[string][]string{} // by the schedule's ID cell
	for _, cells := range tableRows(doc, "| schedule | starts | every (default) | flag |") {
		rows[cells[0]] = cells
	}
	if len(rows) != len(payload.Schedules) {
		t.Errorf("%s's schedule table has %d rows; payload.Schedules %d", architectureDoc, len(rows), len(payload.Schedules))
	}
	words := map[int]string{1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}
	if !strings.Contains(doc, "keep "+words[len(payload.Schedules)]+" schedules of") {
		t.Errorf("%s does not say the workers keep %s schedules", architectureDoc, words[len(payload.Schedules)])
	}
	for _, s := range payload.Schedules {
		id := "`" + s.ID("<source>") + "`"
		cells, ok := rows[id]
		if !ok {
			t.Errorf("schedule %s (%s) is not in %s's schedule table", s.Name, id, architectureDoc)
			continue
		}
		if !strings.HasPrefix(cells[1], "`"+s.Workflow+"`") {
			t.Errorf("%s starts %s, the doc says %q", id, s.Workflow, cells[1])
		}
		every := "off (0)"
		if s.Default > 0 {
			every = shortDuration(s.Default)
		}
		least := "at least " + shortDuration(s.Min)
		if s.Min == s.Default {
			least = "fixed"
		}
		if !strings.HasPrefix(cells[2], every+",") || !strings.Contains(cells[2], least) {
			t.Errorf("%s: every %q, want %s by default, %s", id, cells[2], every, least)
		}
	}
}

// shortDuration is d as the doc writes it: 5m, 1h, 24h.
func shortDuration(d time.Duration) string {
	s := strings.TrimSuffix(d.String(), "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
