package index

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/testsuite"
)

// TestRedumps: the latest re-dump of a source is read back as written,
// a retried record (same start) replaces it, other sources are apart,
// and a table name with a comma is refused.
func TestRedumps(t *testing.T) {
	srv := testsuite.StartIndex(t)
	s := openStore(t, srv, "dbtrail_redumps")
	ctx := context.Background()
	if _, ok, err := s.LastRedump(ctx, "main"); err != nil || ok {
		t.Fatalf("no re-dump yet: ok %v, %v", ok, err)
	}
	t0 := time.Date(2026, 12, 6, 2, 0, 0, 123456000, time.UTC)
	first := Redump{Source: "main", StartedAt: t0, Finished: t0.Add(time.Second), Snapshot: "20261206T020000Z", Tables: []string{"app.a"}, Rows: 5, Seq: 7}
	later := Redump{Source: "main", StartedAt: t0.Add(time.Hour), Finished: t0.Add(time.Hour + 2*time.Second), Snapshot: "20261206T030000Z",
		Tables: []string{"app.a", "app.b"}, Rows: 9, Seq: 11}
	for _, r := range []Redump{first, later, {Source: "other", StartedAt: t0.Add(2 * time.Hour), Finished: t0.Add(2 * time.Hour), Tables: []string{"x.y"}}} {
		if err := s.RecordRedump(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	later.Finished = later.Finished.Add(time.Second) // a retry's end
	if err := s.RecordRedump(ctx, later); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.LastRedump(ctx, "main")
	if err != nil || !ok {
		t.Fatalf("last re-dump: ok %v, %v", ok, err)
	}
	if !got.StartedAt.Equal(later.StartedAt) || !got.Finished.Equal(later.Finished) || got.Snapshot != later.Snapshot ||
		!slices.Equal(got.Tables, later.Tables) || got.Rows != 9 || got.Seq != 11 || got.Took() != 3*time.Second {
		t.Fatalf("last re-dump %+v, want %+v", got, later)
	}
	if err := s.RecordRedump(ctx, Redump{Source: "main", StartedAt: t0, Tables: []string{"app.a,app.b"}}); err == nil {
		t.Fatal("a table name with a comma must be refused")
	}
}
