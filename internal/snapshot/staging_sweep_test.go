package snapshot

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"
	"testing"
)

// runs answers which runs still run: by run ID, an error for "unknown".
type runs map[string]bool

func (r runs) Running(_ context.Context, _, runID string) (bool, error) {
	if runID == "unknown" {
		return false, errors.New("temporal unreachable")
	}
	return r[runID], nil
}

// TestSweepStagings: the folders of runs that no longer run are removed;
// the caller's own, a running run's, one without an owner and one whose
// owner cannot be looked up are kept.
func TestSweepStagings(t *testing.T) {
	dir := t.TempDir()
	owners := map[string]string{"ended": "r-ended", "running": "r-running", "mine": "r-ended", "lookup": "unknown"}
	for _, id := range []string{"ended", "running", "mine", "lookup", "ownerless"} {
		if err := os.MkdirAll(Folder(dir).Staging(id), 0o755); err != nil {
			t.Fatal(err)
		}
		if run := owners[id]; run != "" {
			if err := WriteStagingOwner(dir, id, Owner{WorkflowID: "refresh-main", RunID: run}); err != nil {
				t.Fatal(err)
			}
		}
	}
	log := slog.New(slog.DiscardHandler)
	if err := SweepStagings(context.Background(), dir, "mine", runs{"r-running": true}, log); err != nil {
		t.Fatal(err)
	}
	l, err := Stagings(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, s := range l {
		left = append(left, s.ID)
	}
	slices.Sort(left)
	if !slices.Equal(left, []string{"lookup", "mine", "ownerless", "running"}) {
		t.Fatalf("left %v", left)
	}
}
