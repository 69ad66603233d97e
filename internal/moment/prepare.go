package moment

import (
	"context"
	"fmt"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/when"
)

// History reads a source's schema history; *index.Store has it.
type History interface {
	SchemaHistory(ctx context.Context, source string) ([]change.SchemaVersion, error)
}

// PlanAt reads what a rebuild of sel at at depends on and returns
// MakePlan's decision: the index's facts and the cut (Resolve), the
// snapshots (cat), the footers of the chosen base snapshot's table files
// and the schema history. It writes nothing. A moment or table that cannot
// be rebuilt is a *RefusedError.
func PlanAt(ctx context.Context, ix Index, hist History, cat Catalog, source string, at when.At, sel Selection) (Plan, error) {
	f, err := ReadFacts(ctx, ix, source)
	if err != nil {
		return Plan{}, err
	}
	cut, err := Resolve(ctx, ix, f, at, false)
	if err != nil {
		return Plan{}, err
	}
	h, err := hist.SchemaHistory(ctx, source)
	if err != nil {
		return Plan{}, err
	}
	// An unknown table is refused before anything else is read.
	if _, err := selectTables(cut.At.String(), tablesAt(cut, h), sel); err != nil {
		return Plan{}, err
	}
	snaps, err := cat.Manifests(ctx)
	if err != nil {
		return Plan{}, err
	}
	base, err := ChooseBase(cut, snaps, f.Gaps, f.Starts)
	if err != nil {
		return Plan{}, err
	}
	foot, err := readFooters(ctx, cat, base)
	if err != nil {
		return Plan{}, err
	}
	return MakePlan(PlanInput{Source: source, Cut: cut, Snapshots: snaps, Footers: foot, History: h,
		Gaps: f.Gaps, Starts: f.Starts, Select: sel}, base)
}

// readFooters reads the definition in every table file footer of snapshot
// m (footers only; digests are checked when the rows are read).
func readFooters(ctx context.Context, cat Catalog, m snapshot.Manifest) (map[TableKey]*schema.Table, error) {
	snap, err := cat.Open(ctx, m.SnapshotID)
	if err != nil {
		return nil, err
	}
	out := map[TableKey]*schema.Table{}
	for _, mt := range m.Tables {
		f, err := snapshot.ReadFooter(snap.Path(mt.File))
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", m.SnapshotID, err)
		}
		out[TableKey{mt.Schema, mt.Table}] = f.Table
	}
	return out, nil
}

// Range is the changes between two moments [From, Until): the events with
// After < seq <= Upto. Both ends are cuts just before their moment (see
// Decide's before).
type Range struct {
	From, Until Cut
}

// After and Upto bound the range's seqs.
func (r Range) After() uint64 { return r.From.Seq }
func (r Range) Upto() uint64  { return r.Until.Seq }

// ResolveRange cuts [from, until) and refuses a range that ends before it
// starts or crosses a capture gap (its changes are not all in the index).
func ResolveRange(ctx context.Context, ix Index, f Facts, from, until when.At) (Range, error) {
	a, err := Resolve(ctx, ix, f, from, true)
	if err != nil {
		return Range{}, err
	}
	u := until
	b, err := Resolve(ctx, ix, f, u, until.Kind != when.KindLatest)
	if err != nil {
		return Range{}, err
	}
	r := Range{From: a, Until: b}
	text := "[" + from.String() + ", " + until.String() + ")"
	if b.Seq < a.Seq {
		return Range{}, &RefusedError{At: text, Code: CodeNotFound, Reason: fmt.Sprintf("--until (cut at seq %d) is before --from (cut at seq %d)", b.Seq, a.Seq)}
	}
	for _, g := range f.Gaps {
		if s, ok := lastSeqBefore(g, f); ok && s >= a.Seq && s < b.Seq {
			return Range{}, &RefusedError{At: text, Code: CodeGap, Reason: fmt.Sprintf("capture gap #%d (binlog %s to %s: %s) lies inside the range: the index lacks its changes",
				g.ID, gapFrom(g), gapTo(g), g.Reason)}
		}
	}
	return r, nil
}
