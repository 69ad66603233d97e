package retention

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/storage"
)

// fakeRemover records the calls of Apply and fails those it is told to.
type fakeRemover struct {
	calls   []string
	fail    map[string]error // by place/id
	lockErr error            // RemoveLocal's own failure
}

func (f *fakeRemover) RemoveLocal(_ context.Context, ids []string) (map[string]error, error) {
	f.calls = append(f.calls, fmt.Sprintf("local %v", ids))
	if f.lockErr != nil {
		return nil, f.lockErr
	}
	failed := map[string]error{}
	for _, id := range ids {
		if err := f.fail[PlaceLocal+"/"+id]; err != nil {
			failed[id] = err
		}
	}
	return failed, nil
}

func (f *fakeRemover) RemoveSnapshot(_ context.Context, id string) error {
	f.calls = append(f.calls, "remote "+id)
	return f.fail[PlaceRemote+"/"+id]
}

func (f *fakeRemover) RemoveUnreferenced(context.Context) ([]string, map[string]error, error) {
	f.calls = append(f.calls, "objects")
	if err := f.fail["objects"]; err != nil {
		return nil, nil, err
	}
	return []string{"main/objects/aa/o1"}, map[string]error{"main/objects/bb/o2": fmt.Errorf("delete o2: %w", storage.ErrLocked)}, nil
}

func (f *fakeRemover) RemoveHour(_ context.Context, it Item) error {
	f.calls = append(f.calls, "hour "+it.ID)
	return f.fail[PlaceArchive+"/"+it.ID]
}

// plan: local l1 (seq 10) and l2 (20) removed, l3 (30) kept; remote r1 (10)
// removed, r2 (30) kept; hours h1 (last seq 5) and h2 (15) removed, h3
// (35) kept.
func plan() Plan {
	return Plan{Items: []Item{
		{Place: PlaceLocal, ID: "l1", Seq: 10}, {Place: PlaceLocal, ID: "l2", Seq: 20}, {Place: PlaceLocal, ID: "l3", Seq: 30, Keep: true},
		{Place: PlaceRemote, ID: "r1", Seq: 10}, {Place: PlaceRemote, ID: "r2", Seq: 30, Keep: true},
		{Place: PlaceArchive, ID: "h1", Seq: 5}, {Place: PlaceArchive, ID: "h2", Seq: 15}, {Place: PlaceArchive, ID: "h3", Seq: 35, Keep: true},
	}}
}

func ids(items []Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Place+"/"+it.ID)
	}
	return out
}

func TestApplyOrder(t *testing.T) {
	f := &fakeRemover{}
	out, err := Apply(context.Background(), plan(), f, f)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"local [l1 l2]", "remote r1", "objects", "hour h1", "hour h2"}; !slices.Equal(f.calls, want) {
		t.Errorf("calls %v, want %v", f.calls, want)
	}
	if want := []string{"local/l1", "local/l2", "remote/r1", "object/main/objects/aa/o1", "archive/h1", "archive/h2"}; !slices.Equal(ids(out.Removed), want) {
		t.Errorf("removed %v, want %v", ids(out.Removed), want)
	}
	if len(out.Locked) != 1 || out.Locked[0].Place != PlaceObject || out.Locked[0].ID != "main/objects/bb/o2" {
		t.Errorf("locked %+v, want the object Object Lock kept", out.Locked)
	}
	if len(out.Failed)+len(out.Held) != 0 {
		t.Errorf("outcome %+v", out)
	}
}

// TestApplyKeepsHoursAfterALockedSnapshot: a remote snapshot Object Lock
// keeps stays a base, so the hours after it stay (Held); one before it goes.
func TestApplyKeepsHoursAfterALockedSnapshot(t *testing.T) {
	f := &fakeRemover{fail: map[string]error{
		"remote/r1": fmt.Errorf("delete r1: %w", storage.ErrLocked),
		"local/l2":  errors.New("disk on fire"),
	}}
	out, err := Apply(context.Background(), plan(), f, f)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Locked) != 2 || out.Locked[0].ID != "r1" || len(out.Failed) != 1 || out.Failed[0].ID != "l2" || out.Failed[0].Error != "disk on fire" {
		t.Errorf("locked %v, failed %v", out.Locked, out.Failed)
	}
	if want := []string{"local/l1", "object/main/objects/aa/o1", "archive/h1"}; !slices.Equal(ids(out.Removed), want) {
		t.Errorf("removed %v, want %v", ids(out.Removed), want)
	}
	if len(out.Held) != 1 || out.Held[0].ID != "h2" || !out.Held[0].Keep || out.Held[0].Reason == "" {
		t.Errorf("held %+v, want h2 with a reason", out.Held)
	}
	if slices.Contains(f.calls, "hour h2") {
		t.Error("a held hour was removed")
	}
}

// TestApplyRecordsAnObjectSweepThatFails: when what is referenced cannot
// be told, nothing is swept, the failure is recorded and the run goes on.
func TestApplyRecordsAnObjectSweepThatFails(t *testing.T) {
	f := &fakeRemover{fail: map[string]error{"objects": errors.New("list: timeout")}}
	out, err := Apply(context.Background(), plan(), f, f)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Failed) != 1 || out.Failed[0].Place != PlaceObject || out.Failed[0].Error != "list: timeout" {
		t.Errorf("failed %+v", out.Failed)
	}
	if !slices.Contains(f.calls, "hour h2") {
		t.Error("the run stopped at the failed sweep")
	}
}

// TestUnreferenced is retention's rule for content objects: referenced or
// young or of unknown age stays, the rest goes.
func TestUnreferenced(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	old, young := now.Add(-2*ObjectGrace), now.Add(-ObjectGrace/2)
	objs := []Object{{Name: "a", SHA256: "a", Modified: old}, {Name: "b", SHA256: "b", Modified: old},
		{Name: "c", SHA256: "c", Modified: young}, {Name: "d", SHA256: "d"}}
	got := Unreferenced(objs, map[string]bool{"a": true}, now, ObjectGrace)
	if len(got) != 1 || got[0].Name != "b" {
		t.Fatalf("unreferenced %+v, want b alone", got)
	}
}

func TestApplyWithoutStore(t *testing.T) {
	f := &fakeRemover{}
	out, err := Apply(context.Background(), plan(), f, nil)
	if !errors.Is(err, ErrNoStore) {
		t.Fatalf("err %v, want ErrNoStore", err)
	}
	if want := []string{"local/l1", "local/l2"}; !slices.Equal(ids(out.Removed), want) {
		t.Errorf("local removals before the refusal: %v", ids(out.Removed))
	}
	p := Plan{Items: []Item{{Place: PlaceLocal, ID: "l1", Seq: 10}, {Place: PlaceLocal, ID: "l2", Seq: 20, Keep: true}}}
	if _, err := Apply(context.Background(), p, &fakeRemover{}, nil); err != nil {
		t.Errorf("a local-only plan without store: %v", err)
	}
	lockErr := errors.New("publish lock: held")
	if _, err := Apply(context.Background(), plan(), &fakeRemover{lockErr: lockErr}, nil); !errors.Is(err, lockErr) {
		t.Errorf("the local remover's failure: %v", err)
	}
}
