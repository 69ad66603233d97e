package main

import (
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/index"
)

// TestWriteDrillStatus: status prints the last drill's verdict, when, the
// moment, what it restored, how long it took, its cut and, for a failed
// one, why; and says so when there is none.
func TestWriteDrillStatus(t *testing.T) {
	start := time.Date(2026, 12, 2, 2, 0, 0, 0, time.UTC)
	var b strings.Builder
	writeDrillStatus(&b, index.Drill{Source: "main", StartedAt: start, Finished: start.Add(4200 * time.Millisecond), Target: "scratch:3306",
		Moment: "latest", Cut: "seq 51", Snapshot: "20261202T010000Z", Tables: 6, Rows: 20713, Verdict: index.DrillOK}, true, start.Add(time.Hour))
	want := "  last drill  OK at 2026-12-02T02:00:00Z (1h0m0s ago) into scratch:3306: moment latest, 6 tables, 20713 rows, took 4.2s\n" +
		"              cut seq 51, snapshot 20261202T010000Z\n"
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	writeDrillStatus(&b, index.Drill{StartedAt: start, Finished: start.Add(time.Second), Target: "scratch:3306", Moment: "latest",
		Verdict: index.DrillFailed, Failure: "target scratch:3306 cannot be reached"}, true, start.Add(time.Minute))
	if !strings.Contains(b.String(), "last drill  FAILED at ") || !strings.Contains(b.String(), "failure: target scratch:3306 cannot be reached") || strings.Contains(b.String(), "cut ") {
		t.Fatalf("failed drill:\n%s", b.String())
	}
	b.Reset()
	writeDrillStatus(&b, index.Drill{}, false, start)
	if !strings.HasPrefix(b.String(), "  last drill  none") {
		t.Fatalf("no drill:\n%s", b.String())
	}
}

// TestWriteRedumpStatus: status prints the last partial re-dump's start,
// tables, rows read from the source, duration, snapshot and seq; and says
// so when there is none.
func TestWriteRedumpStatus(t *testing.T) {
	start := time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)
	var b strings.Builder
	writeRedumpStatus(&b, index.Redump{Source: "main", StartedAt: start, Finished: start.Add(3500 * time.Millisecond), Snapshot: "20261206T020000Z",
		Tables: []string{"app.a", "app.b"}, Rows: 750, Seq: 42}, true, start.Add(time.Hour))
	want := "  last redump 2026-12-06T02:00:00Z (1h0m0s ago): 2 tables (app.a, app.b), 750 rows read from the source, took 3.5s; partial snapshot 20261206T020000Z at seq 42\n"
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	writeRedumpStatus(&b, index.Redump{}, false, start)
	if !strings.HasPrefix(b.String(), "  last redump none") {
		t.Fatalf("no re-dump:\n%s", b.String())
	}
}
