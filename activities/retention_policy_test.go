package activities

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"go.temporal.io/sdk/converter"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// TestPruneAndPlanTakeTheWorkersPolicy: the refresh's Prune and
// PlanRetention apply the worker's policy (Activities.Retention), whatever
// an input recorded before the policy moved to the worker says: a Prune
// input with Keep 1 and a retention input with a policy keeping one
// decode, and the worker's policy keeping two (or all) decides.
func TestPruneAndPlanTakeTheWorkersPolicy(t *testing.T) {
	ctx := context.Background()
	ids := []string{"20261201T100000Z", "20261201T110000Z", "20261201T120000Z", "20261201T130000Z"}
	setup := func(t *testing.T, p retention.Policy) (*Activities, string) {
		a := &Activities{BackupDir: filepath.Join(t.TempDir(), "backups"), WorkDir: t.TempDir(), Log: quietLog(), Retention: p}
		dir := a.sourceDir("main")
		for i, id := range ids {
			publishAt(t, dir, id, uint64(10*(i+1)), 100)
		}
		return a, dir
	}
	dc := converter.GetDefaultDataConverter()
	decode := func(t *testing.T, old string, v any) {
		t.Helper()
		p, err := dc.ToPayload(rawJSON(old))
		must(t, err)
		if err := dc.FromPayload(p, v); err != nil {
			t.Fatalf("an old input %s does not decode: %v", old, err)
		}
	}

	t.Run("prune keeps the worker's two", func(t *testing.T) {
		a, dir := setup(t, retention.Policy{KeepSnapshots: 2})
		var in calls.PruneInput
		decode(t, `{"Source":"main","Keep":1,"KeepDays":0,"DropCompacted":null}`, &in)
		res, err := a.Prune(ctx, in)
		must(t, err)
		left, err := snapshot.ListSnapshots(dir)
		must(t, err)
		if !slices.Equal(res.Removed, ids[:2]) || !slices.Equal(left, ids[2:]) {
			t.Fatalf("removed %v, left %v; want the worker's 2 kept: %v", res.Removed, left, ids[2:])
		}
	})
	t.Run("prune keeps all under a worker that keeps all", func(t *testing.T) {
		a, dir := setup(t, retention.Policy{})
		res, err := a.Prune(ctx, calls.PruneInput{Source: "main"})
		must(t, err)
		left, err := snapshot.ListSnapshots(dir)
		must(t, err)
		if len(res.Removed) != 0 || !slices.Equal(left, ids) {
			t.Fatalf("removed %v, left %v; want all kept", res.Removed, left)
		}
	})
	t.Run("plan with the worker's policy", func(t *testing.T) {
		a, _ := setup(t, retention.Policy{KeepSnapshots: 3})
		var in calls.RetentionInput
		decode(t, `{"Source":"main","Policy":{"keep_snapshots":1,"archive_keep_days":1}}`, &in)
		plan, err := a.PlanRetention(ctx, in)
		must(t, err)
		if plan.Policy != a.Retention {
			t.Fatalf("plan's policy %+v, want the worker's %+v", plan.Policy, a.Retention)
		}
		if rm := plan.Removals(); len(rm) != 1 || rm[0].ID != ids[0] {
			t.Fatalf("plan removes %+v, want only %s", rm, ids[0])
		}
	})
	t.Run("a bad worker policy is refused, nothing removed", func(t *testing.T) {
		a, dir := setup(t, retention.Policy{KeepSnapshots: 1, KeepDays: -1})
		if _, err := a.Prune(ctx, calls.PruneInput{Source: "main"}); err == nil {
			t.Fatal("a negative --keep-days accepted")
		}
		if _, err := a.PlanRetention(ctx, calls.RetentionInput{Source: "main"}); err == nil {
			t.Fatal("a negative --keep-days accepted by the plan")
		}
		left, err := snapshot.ListSnapshots(dir)
		must(t, err)
		if !slices.Equal(left, ids) {
			t.Fatalf("left %v", left)
		}
	})
}

// rawJSON is a payload's JSON text as it was recorded.
type rawJSON string

func (r rawJSON) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// TestLocalDecision: the ids the plan removes locally, and the ids kept
// only because their remote copy is not confirmed; other places' items
// and other reasons are neither.
func TestLocalDecision(t *testing.T) {
	plan := retention.Plan{Items: []retention.Item{
		{Place: retention.PlaceLocal, ID: "a"},
		{Place: retention.PlaceLocal, ID: "b", Keep: true, Reason: heldReason},
		{Place: retention.PlaceRemote, ID: "c"},
		{Place: retention.PlaceLocal, ID: "d", Keep: true, Reason: "current"},
		{Place: retention.PlaceLocal, ID: "e"},
	}}
	remove, held := localDecision(plan)
	if !slices.Equal(remove, []string{"a", "e"}) || !slices.Equal(held, []string{"b"}) {
		t.Fatalf("remove %v held %v", remove, held)
	}
}
