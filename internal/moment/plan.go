package moment

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/schemahist"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// TableKey names a source table.
type TableKey struct{ Schema, Table string }

func (k TableKey) String() string { return k.Schema + "." + k.Table }

func cmpKey(a, b TableKey) int {
	return cmp.Or(strings.Compare(a.Schema, b.Schema), strings.Compare(a.Table, b.Table))
}

// Selection picks the tables of a rebuild or export. Both empty: every
// table of the source at the moment.
type Selection struct {
	Schemas []string // every table of these schemas
	Tables  []string // schema.table
}

// Plan is a rebuild decided before anything is read: one cut for every
// table, the snapshot each table starts from, and the window of events
// folded into it. It is computed by MakePlan, a pure function, and carried
// in workflow histories (JSON).
type Plan struct {
	Source string `json:"source"`
	Cut    Cut    `json:"cut"`
	// Base is the snapshot every table starts from and BasePosition its
	// position: the newest at or before the cut on the cut's side of every
	// capture gap.
	Base         string             `json:"base"`
	BasePosition binlogpos.Position `json:"base_position"`
	Tables       []TablePlan        `json:"tables"` // sorted by schema, table
}

// TablePlan is one table of a Plan: the table at Base (table file and
// chain) with the events After < seq <= Upto folded in.
type TablePlan struct {
	Schema   string `json:"schema"`
	Table    string `json:"table"`
	Snapshot string `json:"snapshot"`
	After    uint64 `json:"after"`
	Upto     uint64 `json:"upto"`
	// Lineage is the table's schema changes between After and Upto that
	// the rebuild folds on its way (schemahist.Trace): renames (the table
	// is Lineage.Base in Snapshot), reshapes, empty starts, a creation
	// (nothing read from Snapshot). nil when it has none.
	Lineage *schemahist.Lineage `json:"lineage,omitempty"`
	// CreateFrom names a snapshot published after the cut that holds the
	// table under its definition at the cut (no schema change of the table
	// between the two): its CREATE TABLE (the source's own text, read by
	// the refresh that folded the change) is the table's at the cut, which
	// a folded lineage otherwise renders from the definition (no defaults,
	// comments or secondary indexes). "" when there is none.
	CreateFrom string `json:"create_from,omitempty"`
	// Def is the table's definition at the cut when schema changes between
	// Snapshot and the cut moved only its definition (indexes, comments,
	// defaults of later rows: schemahist.StepKeep), nil otherwise: its
	// columns and rows read as Snapshot's, its CREATE TABLE is CreateFrom's
	// when set, else rendered from Def.
	Def *schema.Table `json:"def,omitempty"`
}

// Key returns the table's key.
func (t TablePlan) Key() TableKey { return TableKey{t.Schema, t.Table} }

// PlanInput is everything MakePlan depends on.
type PlanInput struct {
	Source string
	Cut    Cut
	// Snapshots are the published snapshots' manifests, in any order.
	Snapshots []snapshot.Manifest
	// Footers are the definitions in the table file footers of the base
	// snapshot (ChooseBase's), by table.
	Footers map[TableKey]*schema.Table
	// History is the source's schema history (index.Store.SchemaHistory).
	History []change.SchemaVersion
	Gaps    []change.Gap
	Starts  []change.Start
	Select  Selection
}

// ChooseBase returns the snapshot a rebuild at cut starts from: the newest
// (greatest seq, then id) at or before the cut whose state is on the same
// side of every capture gap as the cut. It refuses a cut before the oldest
// snapshot, with no snapshot at all, and one whose only candidates are
// across a gap.
func ChooseBase(cut Cut, snaps []snapshot.Manifest, gaps []change.Gap, starts []change.Start) (snapshot.Manifest, error) {
	refuse := func(code Code, format string, args ...any) (snapshot.Manifest, error) {
		return snapshot.Manifest{}, &RefusedError{At: cut.At.String(), Code: code, Reason: fmt.Sprintf(format, args...)}
	}
	if len(snaps) == 0 {
		return refuse(CodeNoSnapshot, "the source has no published snapshot: take a full backup first")
	}
	sorted := slices.Clone(snaps)
	slices.SortFunc(sorted, func(a, b snapshot.Manifest) int {
		return cmp.Or(cmp.Compare(a.Position.Seq, b.Position.Seq), strings.Compare(a.SnapshotID, b.SnapshotID))
	})
	var crossed string
	for i := len(sorted) - 1; i >= 0 && crossed == ""; i-- {
		m := sorted[i]
		if m.Position.Seq > cut.Seq {
			continue
		}
		usable := true
		for _, g := range gaps {
			snapAfter, cutAfterGap := after(m.Position, gapTo(g)), cutAfter(cut, g, starts)
			switch {
			case snapAfter == cutAfterGap:
				continue
			case !snapAfter: // the window would cross the gap, and so would an older snapshot's
				crossed = fmt.Sprintf("the newest snapshot at or before it, %s (seq %d, binlog %s), is before capture gap #%d (binlog %s to %s: %s) and the moment after it: the index lacks the gap's changes",
					m.SnapshotID, m.Position.Seq, m.Position, g.ID, gapFrom(g), gapTo(g), g.Reason)
			}
			usable = false
			break
		}
		if usable {
			return m, nil
		}
	}
	if crossed != "" {
		return refuse(CodeGap, "%s; take a full backup after the gap", crossed)
	}
	o := sorted[0]
	return refuse(CodeBeforeSnapshots, "its cut (seq %d) is before the oldest snapshot %s (seq %d, binlog %s): the tables before it are unknown",
		cut.Seq, o.SnapshotID, o.Position.Seq, o.Position)
}

// after reports whether p is at or after q (positions that cannot be
// ordered count as before).
func after(p, q binlogpos.Position) bool {
	c, err := binlogpos.Compare(p, q)
	return err == nil && c >= 0
}

// cutAfter reports whether the cut's state includes what gap g lost: it
// lies after the last transaction before the gap, or is a position cut at
// or after the gap's end.
func cutAfter(cut Cut, g change.Gap, starts []change.Start) bool {
	f := Facts{Starts: starts}
	if s, ok := lastSeqBefore(g, f); ok && cut.Seq > s {
		return true
	}
	return !cut.Landed && after(cut.Txn.Position, gapTo(g))
}

// MakePlan decides, for every selected table that exists at the cut, the
// window of events folded into base. It refuses (a *RefusedError, nothing
// planned) a selected table unknown at the cut, and a table it cannot
// rebuild from base: not in base (created after it), or changed by a
// schema change between base and the cut other than one that keeps its
// columns and rows (an ALTER of indexes or options). One refusal refuses
// the plan: a moment is rebuilt whole or not at all.
func MakePlan(in PlanInput, base snapshot.Manifest) (Plan, error) {
	at := in.Cut.At.String()
	cutPos := in.Cut.schemaPos()
	p := Plan{Source: in.Source, Cut: in.Cut, Base: base.SnapshotID, BasePosition: base.Position}
	defs := tablesAt(in.Cut, in.History)
	keys, err := selectTables(at, defs, in.Select)
	if err != nil {
		return Plan{}, err
	}
	w := schemahist.Window{FromSeq: base.Position.Seq, From: base.Position.Coords(), ToSeq: in.Cut.Seq, To: cutPos}
	tr := traceFrom(base, in.Footers, w, in.History)
	var why []string
	for _, k := range keys {
		l, r := tableLineage(k, defs[k], base, tr, w, in.History)
		if r != "" {
			why = append(why, k.String()+": "+r)
			continue
		}
		tp := TablePlan{Schema: k.Schema, Table: k.Table, Snapshot: base.SnapshotID, After: base.Position.Seq, Upto: in.Cut.Seq}
		switch {
		case l.Folded():
			tp.Lineage = &l
			tp.CreateFrom = createFrom(k, in.Cut.Seq, cutPos, in.Snapshots, in.History)
		case len(l.Steps) > 0:
			tp.Def = defs[k]
			tp.CreateFrom = createFrom(k, in.Cut.Seq, cutPos, in.Snapshots, in.History)
		}
		p.Tables = append(p.Tables, tp)
	}
	if len(why) > 0 {
		code := CodeShape
		if len(why) == 1 && strings.Contains(why[0], "not in snapshot") {
			code = CodeNewTable
		}
		return Plan{}, &RefusedError{At: at, Code: code, Reason: strings.Join(why, "; ")}
	}
	return p, nil
}

// tablesAt is the definition of every table at the cut (nil: dropped), by
// table, from the schema history.
func tablesAt(cut Cut, hist []change.SchemaVersion) map[TableKey]*schema.Table {
	pos := cut.schemaPos()
	defs := map[TableKey]*schema.Table{}
	for _, v := range hist {
		if schema.IsSystemSchema(v.Schema) || !schemahist.AtOrBefore(v, cut.Seq, pos) {
			continue
		}
		defs[TableKey{v.Schema, v.Table}] = v.Definition
	}
	return defs
}

// selectTables returns the tables of sel that exist at the cut (defs), or
// every one when sel is empty, sorted.
func selectTables(at string, defs map[TableKey]*schema.Table, sel Selection) ([]TableKey, error) {
	var live []TableKey
	for k, d := range defs {
		if d != nil {
			live = append(live, k)
		}
	}
	slices.SortFunc(live, cmpKey)
	if len(sel.Schemas) == 0 && len(sel.Tables) == 0 {
		if len(live) == 0 {
			return nil, &RefusedError{At: at, Code: CodeUnknownTable, Reason: "no table exists at the moment"}
		}
		return live, nil
	}
	pick := map[TableKey]bool{}
	for _, s := range sel.Schemas {
		n := 0
		for _, k := range live {
			if k.Schema == s {
				pick[k] = true
				n++
			}
		}
		if n == 0 {
			return nil, &RefusedError{At: at, Code: CodeUnknownTable, Reason: fmt.Sprintf("schema %q has no table at the moment (schemas then: %s)", s, schemasOf(live))}
		}
	}
	for _, name := range sel.Tables {
		s, t, ok := strings.Cut(name, ".")
		k := TableKey{s, t}
		if !ok || defs[k] == nil {
			return nil, &RefusedError{At: at, Code: CodeUnknownTable, Reason: fmt.Sprintf("table %q does not exist at the moment (name it as schema.table; %s)", name, tablesHint(live, s))}
		}
		pick[k] = true
	}
	var out []TableKey
	for _, k := range live {
		if pick[k] {
			out = append(out, k)
		}
	}
	return out, nil
}

func schemasOf(keys []TableKey) string {
	var s []string
	for _, k := range keys {
		if !slices.Contains(s, k.Schema) {
			s = append(s, k.Schema)
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// tablesHint names a few tables of schema s at the moment.
func tablesHint(live []TableKey, s string) string {
	var names []string
	for _, k := range live {
		if k.Schema == s {
			names = append(names, k.String())
		}
	}
	switch {
	case len(names) == 0:
		return "schemas then: " + schemasOf(live)
	case len(names) > 8:
		names = append(names[:8], fmt.Sprintf("and %d more", len(names)-8))
	}
	return "tables of " + s + " then: " + strings.Join(names, ", ")
}

// traceFrom follows base's tables (their footers' definitions) through
// the schema changes in w: schemahist.Trace, the rule the refresh plans by.
func traceFrom(base snapshot.Manifest, foot map[TableKey]*schema.Table, w schemahist.Window, hist []change.SchemaVersion) schemahist.Traced {
	start := map[schemahist.Key]*schema.Table{}
	for _, mt := range base.Tables {
		if d := foot[TableKey{mt.Schema, mt.Table}]; d != nil {
			start[schemahist.Key{Schema: mt.Schema, Table: mt.Table}] = d
		}
	}
	return schemahist.Trace(w, start, hist)
}

// tableLineage is how table k at the cut (definition def) is rebuilt from
// base, or why it cannot be: a table with no origin in base (not in it and
// not created after it), a schema change the fold cannot prove (it changed
// rows without row events, or columns in a way no rule maps), a footer not
// read, or a history that disagrees with the definition at the cut.
func tableLineage(k TableKey, def *schema.Table, base snapshot.Manifest, tr schemahist.Traced, w schemahist.Window,
	hist []change.SchemaVersion) (schemahist.Lineage, string) {
	stored, err := def.Stored()
	if err != nil {
		return schemahist.Lineage{}, err.Error()
	}
	l, ok := tr.Tables[schemahist.Key{Schema: k.Schema, Table: k.Table}]
	_, inBase := base.Table(k.Schema, k.Table)
	switch {
	case !ok && inBase:
		return l, fmt.Sprintf("the footer of its table file in snapshot %s was not read", base.SnapshotID)
	case !ok:
		return l, fmt.Sprintf("not in snapshot %s (created after it%s): pick a moment after a full backup that holds it",
			base.SnapshotID, describeChanges(k, w, hist))
	case l.Redump != "":
		return l, fmt.Sprintf("a schema change between snapshot %s and the moment cannot be folded: %s: no snapshot of the new shape is at or before the moment",
			base.SnapshotID, l.Redump)
	case !schema.SameShape(l.Def, stored):
		return l, fmt.Sprintf("its columns at the moment differ from its table file in snapshot %s (%s)%s: no snapshot of the new shape is at or before the moment",
			base.SnapshotID, schemahist.ShapeDiff(l.Def, stored), describeChanges(k, w, hist))
	}
	return l, ""
}

// describeChanges lists table k's schema changes in w, for a message.
func describeChanges(k TableKey, w schemahist.Window, hist []change.SchemaVersion) string {
	var parts []string
	for _, v := range hist {
		if v.Schema == k.Schema && v.Table == k.Table && w.Holds(v) {
			parts = append(parts, fmt.Sprintf("%s at seq %d binlog %s:%d (`%s`)", schemahist.Verb(v.DDL), v.Seq, v.BinlogFile, v.BinlogPos, schemahist.Abbreviate(v.DDL, 80)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	if len(parts) > 3 {
		parts = append(parts[:3], fmt.Sprintf("and %d more", len(parts)-3))
	}
	return "; schema changes after the snapshot: " + strings.Join(parts, ", ")
}

// createFrom returns the oldest snapshot of snaps at or after the cut
// (seq cut, schema position cutPos) that holds table k under the same
// schema version as the cut: no version of k in hist lies after the cut
// and at or before the snapshot. "" when none.
func createFrom(k TableKey, cut uint64, cutPos binlogpos.Position, snaps []snapshot.Manifest, hist []change.SchemaVersion) string {
	var best *snapshot.Manifest
	for i := range snaps {
		m := &snaps[i]
		if m.Position.Seq < cut || (best != nil && m.Position.Seq >= best.Position.Seq) {
			continue
		}
		if _, ok := m.Table(k.Schema, k.Table); !ok {
			continue
		}
		moved := slices.ContainsFunc(hist, func(v change.SchemaVersion) bool {
			return v.Schema == k.Schema && v.Table == k.Table && !schemahist.AtOrBefore(v, cut, cutPos) &&
				schemahist.AtOrBefore(v, m.Position.Seq, m.Position.Coords())
		})
		if !moved {
			best = m
		}
	}
	if best == nil {
		return ""
	}
	return best.SnapshotID
}
