package foldplan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/schemahist"
)

// window is (previous snapshot position, cut], by seq and binlog position
// (schemahist.Window: the one rule of what a window holds).
type window struct{ schemahist.Window }

func newWindow(in Input) window {
	w := schemahist.Window{ToSeq: in.Cut, To: in.CutPos,
		From: binlogpos.Position{File: in.Prev.Position.File, Pos: in.Prev.Position.Pos}}
	if in.Prev.Position.Seq > 0 {
		w.FromSeq = in.Prev.Position.Seq
	}
	return window{w}
}

// windowVersions are the schema versions inside the window, per table and
// all together, in stream order.
type windowVersions struct {
	of  map[TableKey][]change.SchemaVersion
	all []change.SchemaVersion
}

func (w window) versions(vs []change.SchemaVersion) windowVersions {
	out := windowVersions{of: map[TableKey][]change.SchemaVersion{}}
	for _, v := range vs {
		if w.Holds(v) {
			out.all = append(out.all, v)
		}
	}
	slices.SortStableFunc(out.all, func(a, b change.SchemaVersion) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.BinlogPos, b.BinlogPos),
			cmpKey(TableKey{a.Schema, a.Table}, TableKey{b.Schema, b.Table}), cmp.Compare(a.Version, b.Version))
	})
	for _, v := range out.all {
		k := TableKey{v.Schema, v.Table}
		out.of[k] = append(out.of[k], v)
	}
	return out
}

// globalRewrites are the reasons every table is rewritten: the previous
// snapshot is not local (nothing to link).
func (w window) globalRewrites(in Input) []string {
	if !in.PrevLocal {
		return []string{"the previous snapshot is not on local disk (nothing to link)"}
	}
	return nil
}

// gapRefusals are the reasons every table is refused because the window
// crossed a capture gap. A gap is the open range (from, to) of positions
// capture missed; it crosses the window (prev, cut] when from < cut and
// to > prev, so a gap that ends at the previous snapshot or starts at the
// cut only touches it.
//
// The refresh issue asks for a full rewrite across a gap; the contract
// (docs/workflows.md) for a full backup. A rewrite folds the previous snapshot with
// the index, which lacks exactly the gap's changes, so it would publish a
// wrong table as if it were right: only a full backup (a refusal here, which
// the Refresh workflow turns into a FullBackup) reads them back.
func (w window) gapRefusals(in Input) []string {
	var why []string
	gaps := slices.Clone(in.Gaps)
	slices.SortStableFunc(gaps, func(a, b change.Gap) int { return cmp.Compare(a.ID, b.ID) })
	for _, g := range gaps {
		from := g.From().Coords()
		to := g.To()
		c1, err1 := binlogpos.Compare(from, w.To)
		c2, err2 := binlogpos.Compare(to, w.From)
		switch {
		case err1 != nil || err2 != nil:
			why = append(why, fmt.Sprintf("capture gap #%d (%s to %s) cannot be ordered against the window (%s, %s]: %v",
				g.ID, from, to, w.From, w.To, cmp.Or(err1, err2)))
		case c1 < 0 && c2 > 0:
			why = append(why, fmt.Sprintf("the window (%s, %s] crossed capture gap #%d (%s to %s: %s): the index lacks its changes, take a full backup",
				w.From, w.To, g.ID, from, to, g.Reason))
		}
	}
	return why
}

// refusal returns why a previous table cannot be refreshed, or "".
func refusal(vs []change.SchemaVersion, all []change.SchemaVersion, def, cur *schema.Table) string {
	var why []string
	if len(vs) > 0 {
		why = append(why, describeVersions(vs, all))
	}
	switch {
	case cur == nil:
		why = append(why, "the table no longer exists at the cut")
	case def == nil:
		why = append(why, "the table file's definition is unknown (no footer)")
	case !schema.SameShape(def, cur):
		why = append(why, "columns differ from the table file: "+schemahist.ShapeDiff(def, cur))
	}
	return strings.Join(why, "; ")
}

// describeVersions names the schema changes of one table in the window.
func describeVersions(vs, all []change.SchemaVersion) string {
	const show = 3
	var parts []string
	for i, v := range vs {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(vs)-show))
			break
		}
		what := schemahist.Verb(v.DDL) + fmt.Sprintf(" at seq %d", v.Seq)
		if v.Definition == nil {
			if to, ok := renamedTo(v, all); ok {
				what += " renames it to " + to.String()
			} else {
				what += " removes it"
			}
		}
		parts = append(parts, what+" (`"+schemahist.Abbreviate(v.DDL, 100)+"`)")
	}
	n := "a schema change"
	if len(vs) > 1 {
		n = fmt.Sprintf("%d schema changes", len(vs))
	}
	return n + " in the window: " + strings.Join(parts, ", ")
}

// renamedTo finds the table a removing version's statement created under
// another name (RENAME TABLE, ALTER TABLE ... RENAME).
func renamedTo(v change.SchemaVersion, all []change.SchemaVersion) (TableKey, bool) {
	for _, o := range all {
		if o.Seq == v.Seq && o.BinlogFile == v.BinlogFile && o.BinlogPos == v.BinlogPos && o.DDL == v.DDL &&
			o.Definition != nil && (o.Schema != v.Schema || o.Table != v.Table) {
			return TableKey{o.Schema, o.Table}, true
		}
	}
	return TableKey{}, false
}
