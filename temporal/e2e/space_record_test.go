package e2e

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"go.temporal.io/sdk/converter"

	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/testsuite"
)

// spaceSteps are the spaceneed.Step records in the activity results of the
// latest run of workflowID and of its children, found by their JSON key
// ("room" or "Room", an object with a kind).
func (e *backupEnv) spaceSteps(t *testing.T, workflowID string) []spaceneed.Step {
	t.Helper()
	var out []spaceneed.Step
	hist := fetchHistory(t, e.ctx, e.c, workflowID, "")
	dc := converter.GetDefaultDataConverter()
	for _, ev := range hist.GetEvents() {
		if a := ev.GetChildWorkflowExecutionStartedEventAttributes(); a != nil {
			out = append(out, e.spaceSteps(t, a.GetWorkflowExecution().GetWorkflowId())...)
		}
		a := ev.GetActivityTaskCompletedEventAttributes()
		if a == nil || len(a.GetResult().GetPayloads()) == 0 {
			continue
		}
		var v any
		if err := dc.FromPayload(a.GetResult().GetPayloads()[0], &v); err != nil {
			continue
		}
		out = append(out, findSteps(v)...)
	}
	return out
}

// findSteps are the spaceneed.Step objects under a "room" or "Room" key in v.
func findSteps(v any) []spaceneed.Step {
	var out []spaceneed.Step
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			if m, ok := sub.(map[string]any); ok && (k == "room" || k == "Room") && m["kind"] != nil {
				b, _ := json.Marshal(m)
				var s spaceneed.Step
				if json.Unmarshal(b, &s) == nil {
					out = append(out, s)
				}
				continue
			}
			out = append(out, findSteps(sub)...)
		}
	case []any:
		for _, sub := range x {
			out = append(out, findSteps(sub)...)
		}
	}
	return out
}

// TestStepsRecordTheirSpace: every writing step of a full backup,
// refreshes by pairs until their chain is compacted and one by rewrites, a
// Parquet, a .sql and a changes export and a restore records in its
// activity result (the workflow history) its kind, its estimate and the
// bytes it wrote: dump, convert, pair, compact, rewrite, export, sql,
// changes, stage. A sure estimate is never
// below what was written (a changes export's is not sure: nothing measured
// says how large its images are).
func TestStepsRecordTheirSpace(t *testing.T) {
	e := newBackupEnv(t)
	fillBig(t, e)
	// The dump's estimate reads data_length, InnoDB's statistics, which
	// trail a fresh load until InnoDB recalculates them (docs/workflows.md).
	e.exec(t, "ANALYZE TABLE big")
	e.waitCaughtUp(t)
	e.fullBackup(t)
	kinds := map[string][]spaceneed.Step{}
	collect := func(workflowID string) {
		for _, s := range e.spaceSteps(t, workflowID) {
			kinds[s.Kind] = append(kinds[s.Kind], s)
		}
	}
	collect(payload.FullBackupWorkflowID("main"))
	from := sleepToNextSecond().UTC().Format("2006-01-02 15:04:05")
	e.exec(t, "UPDATE big SET v = REPEAT('y', 200) WHERE id < 300")
	e.waitCaughtUp(t)
	if res := e.refresh(t, payload.RefreshInput{TableDeltas: true}); res.Refused {
		t.Fatalf("refresh by pairs refused: %+v", res)
	}
	collect(payload.RefreshWorkflowID("main"))
	// More pairs until the chain is long enough to be compacted
	// (foldplan.CompactAt entries).
	for round := 0; ; round++ {
		if round > foldplan.CompactAt {
			t.Fatalf("no compaction after %d refreshes by pairs", round)
		}
		e.exec(t, "UPDATE big SET v = CONCAT('r', ?) WHERE id % 50 = ?", round, round)
		res := e.refresh(t, payload.RefreshInput{TableDeltas: true})
		if res.Refused {
			t.Fatalf("refresh by pairs refused: %+v", res)
		}
		if len(res.Compact) > 0 {
			must(t, e.waitClosed(t, payload.CompactWorkflowID("main")))
			collect(payload.CompactWorkflowID("main"))
			break
		}
	}
	e.exec(t, "UPDATE big SET v = REPEAT('z', 100) WHERE id >= 3000")
	e.waitCaughtUp(t)
	if res := e.refresh(t, payload.RefreshInput{}); res.Refused {
		t.Fatalf("refresh by rewrites refused: %+v", res)
	}
	collect(payload.RefreshWorkflowID("main"))
	dir := t.TempDir()
	for _, spec := range []payload.ExportSpec{
		{Format: payload.ExportParquet, At: "latest", Out: filepath.Join(dir, "parquet")},
		{Format: payload.ExportSQL, At: "latest", Out: filepath.Join(dir, "out.sql")},
		{Format: payload.ExportChanges, From: from, Until: "latest", Out: filepath.Join(dir, "changes")},
	} {
		if _, err := e.export(t, spec); err != nil {
			t.Fatalf("export %s: %v", spec.Format, err)
		}
		collect(payload.ExportWorkflowID("main", spec.Out))
	}
	target := testsuite.StartTarget(t, 36)
	in := payload.RestoreInput{RestoreSpec: payload.RestoreSpec{At: "latest", Schemas: []string{"app"}}}
	if _, err := e.restore(t, target, in); err != nil {
		t.Fatalf("restore: %v", err)
	}
	in.Source, in.Target = "main", e.target(t, target)
	collect(payload.RestoreWorkflowID(in.RestoreSpec, target.Addr()))

	for _, k := range []string{"dump", "convert", "pair", "rewrite", "compact", "export", "sql", "changes", "stage"} {
		if len(kinds[k]) == 0 {
			t.Errorf("no step of kind %s recorded its room (recorded: %v)", k, slices.Sorted(maps.Keys(kinds)))
		}
		for _, s := range kinds[k] {
			t.Logf("%s: estimate %d (sure %v), written %d, ratio %.2f", k, s.Estimate, s.Sure, s.Written, spaceneed.Ratio(s.Written, s.Estimate))
			if s.Written == 0 || s.Sure && s.Written > s.Estimate {
				t.Errorf("%s: estimate %d (sure %v), written %d: want bytes written, at most a sure estimate", k, s.Estimate, s.Sure, s.Written)
			}
		}
	}
}
