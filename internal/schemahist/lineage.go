package schemahist

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// Key names a table.
type Key struct{ Schema, Table string }

func (k Key) String() string { return k.Schema + "." + k.Table }

// StepKind is what one schema change does to a table's rows in a lineage.
type StepKind string

const (
	// StepKeep: columns, key and rows unchanged; only the definition moves
	// (indexes, comments, options, defaults of future rows).
	StepKeep StepKind = "keep"
	// StepReshape: every row is mapped to the new columns (Step.Reshape).
	StepReshape StepKind = "reshape"
	// StepEmpty: the table is empty from here on (created, truncated,
	// replaced); later events fill it.
	StepEmpty StepKind = "empty"
	// StepRename: the table continues under another name (Step.Schema,
	// Step.Table) with the same rows.
	StepRename StepKind = "rename"
)

// Step is one schema change in a table's lineage, in stream order.
type Step struct {
	Kind StepKind `json:"kind"`
	// Seq: the table's events with seq <= Seq are before the step (the
	// previous name and shape), those with a greater seq after it.
	Seq uint64 `json:"seq"`
	// Schema and Table name the table after the step.
	Schema string `json:"schema"`
	Table  string `json:"table"`
	// Def is the stored definition (schema.Table.Stored) after the step.
	Def     *schema.Table   `json:"def"`
	Reshape *schema.Reshape `json:"reshape,omitempty"`
	// What says what the step is, for decisions and messages.
	What string `json:"what"`
}

// Lineage is how one table at a window's end came to be from the window's
// start: its name at the start (none when it was created inside), and the
// schema changes between.
type Lineage struct {
	// Base names the table at the window's start; zero when Created.
	Base Key `json:"base"`
	// Created: the table was not there at the start; Steps[0] is the
	// StepEmpty of the statement that created it.
	Created bool   `json:"created,omitempty"`
	Steps   []Step `json:"steps,omitempty"`
	// Def is the stored definition at the window's end.
	Def *schema.Table `json:"def"`
	// Redump is why the fold cannot prove a step's effect on the rows: the
	// table must be read from the source again. "" when every step is proven.
	Redump string `json:"redump,omitempty"`
}

// Folded reports whether the lineage needs more than the table's own files
// and events: a rename, a reshape, an empty start, or a creation.
func (l Lineage) Folded() bool {
	return l.Created || slices.ContainsFunc(l.Steps, func(s Step) bool { return s.Kind != StepKeep })
}

// Describe lists the steps for a decision: at most four, then a count.
func (l Lineage) Describe() string {
	var parts []string
	for i, s := range l.Steps {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("and %d more", len(l.Steps)-4))
			break
		}
		parts = append(parts, s.What)
	}
	return strings.Join(parts, "; ")
}

// Traced is the result of Trace.
type Traced struct {
	// Tables are the lineages of the tables that exist at the window's
	// end, by their names there.
	Tables map[Key]Lineage
	// Gone are the start's tables that no table at the end descends from,
	// with the statement that removed them.
	Gone map[Key]string
}

// Trace follows the tables of a window's start through the schema
// versions inside w (Window.Holds) to its end. start holds the stored
// definition of every table at the start (a snapshot's, from its table
// files' footers). Statements apply in stream order; the versions one
// statement wrote (same seq, position and text) apply together, renames
// first in the statement's own order. Trace is pure and deterministic.
func Trace(w Window, start map[Key]*schema.Table, hist []change.SchemaVersion) Traced {
	state := map[Key]*Lineage{}
	for k, def := range start {
		if def != nil {
			state[k] = &Lineage{Base: k, Def: def}
		}
	}
	gone := map[Key]string{}
	for _, g := range statements(w, hist) {
		applyStatement(state, gone, g)
	}
	out := Traced{Tables: map[Key]Lineage{}, Gone: map[Key]string{}}
	from := map[Key]bool{}
	for k, l := range state {
		out.Tables[k] = *l
		if !l.Created && l.Base != (Key{}) {
			from[l.Base] = true
		}
	}
	for k := range start {
		if start[k] != nil && !from[k] {
			out.Gone[k] = cmp.Or(gone[k], "removed by a schema change in the window")
		}
	}
	return out
}

// statements groups the versions inside w by statement, in stream order.
func statements(w Window, hist []change.SchemaVersion) [][]change.SchemaVersion {
	var in []change.SchemaVersion
	for _, v := range hist {
		if w.Holds(v) && !schema.IsSystemSchema(v.Schema) {
			in = append(in, v)
		}
	}
	slices.SortStableFunc(in, func(a, b change.SchemaVersion) int {
		if c := cmp.Compare(a.Seq, b.Seq); c != 0 {
			return c
		}
		if c, err := binlogpos.Compare(a.Pos().Coords(), b.Pos().Coords()); err == nil && c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(a.DDL, b.DDL), strings.Compare(a.Schema, b.Schema),
			strings.Compare(a.Table, b.Table), cmp.Compare(a.Version, b.Version))
	})
	var out [][]change.SchemaVersion
	for i, v := range in {
		if i > 0 {
			p := in[i-1]
			if p.Seq == v.Seq && p.BinlogFile == v.BinlogFile && p.BinlogPos == v.BinlogPos && p.DDL == v.DDL {
				out[len(out)-1] = append(out[len(out)-1], v)
				continue
			}
		}
		out = append(out, []change.SchemaVersion{v})
	}
	return out
}

// applyStatement applies the versions of one statement to state.
func applyStatement(state map[Key]*Lineage, gone map[Key]string, g []change.SchemaVersion) {
	v0 := g[0]
	what := func(v change.SchemaVersion) string {
		return fmt.Sprintf("%s at seq %d (`%s`)", Verb(v.DDL), v.Seq, Abbreviate(v.DDL, 100))
	}
	renamed := isRename(g)
	if renamed {
		pairs, err := schema.RenamePairs(v0.DDL)
		if err != nil || len(pairs) == 0 {
			// Unknown moves: every table the statement named loses its
			// origin (a version with a definition is marked below).
			for _, v := range g {
				if l := state[Key{v.Schema, v.Table}]; l != nil {
					l.Redump = cmp.Or(l.Redump, "the rename "+what(v)+" could not be read: "+fmt.Sprint(err))
				}
			}
		}
		for _, p := range pairs {
			from := Key{cmp.Or(p.FromSchema, schemaOf(g, p.From)), p.From}
			to := Key{cmp.Or(p.ToSchema, schemaOf(g, p.To)), p.To}
			l := state[from]
			delete(state, from)
			if l == nil {
				continue
			}
			d := l.Def.Clone()
			d.Schema, d.Name = to.Schema, to.Table
			l.Def = d
			l.Steps = append(l.Steps, Step{Kind: StepRename, Seq: v0.Seq, Schema: to.Schema, Table: to.Table, Def: d,
				What: fmt.Sprintf("%s renames %s to %s", what(v0), from, to)})
			state[to] = l
		}
	}
	for i, v := range g {
		k := Key{v.Schema, v.Table}
		if renamed && lastOf(g, i) < 0 {
			continue // a rename's versions of one name: only the last one tells where the name ends
		}
		if v.Definition == nil {
			if renamed {
				if l := state[k]; l != nil {
					l.Redump = cmp.Or(l.Redump, "the rename "+what(v)+" removes it, but its statement does not say so")
				}
				continue
			}
			if state[k] != nil && !state[k].Created {
				gone[state[k].Base] = what(v) + " removes it"
			}
			delete(state, k)
			continue
		}
		if l := state[k]; renamed && Verb(v.DDL) == "RENAME" && l != nil && schema.SameShape(l.Def, StoredDef(v.Definition)) {
			continue // the move above carried it
		}
		applyVersion(state, k, v, what(v))
	}
}

// lastOf returns i when g[i] is the last version of its table in g, else -1.
func lastOf(g []change.SchemaVersion, i int) int {
	for _, o := range g[i+1:] {
		if o.Schema == g[i].Schema && o.Table == g[i].Table {
			return -1
		}
	}
	return i
}

// applyVersion applies one version with a definition to table k.
func applyVersion(state map[Key]*Lineage, k Key, v change.SchemaVersion, what string) {
	def, err := v.Definition.Stored()
	if err != nil {
		def = v.Definition
	}
	def = def.Clone()
	def.Schema, def.Name = k.Schema, k.Table
	verb := Verb(v.DDL)
	if verb == "CREATE" && !KeepsRows(v) {
		state[k] = &Lineage{Created: true, Def: def, Steps: []Step{{Kind: StepEmpty, Seq: v.Seq, Schema: k.Schema,
			Table: k.Table, Def: def, What: what + " creates it empty"}}}
		return
	}
	l := state[k]
	if l == nil {
		state[k] = &Lineage{Def: def, Redump: what + " defines it, but its rows before are unknown (not in the snapshot, no CREATE in the window)"}
		return
	}
	if err != nil {
		l.Redump = cmp.Or(l.Redump, fmt.Sprintf("%s: %v", what, err))
	}
	old := l.Def
	l.Def = def
	if l.Redump != "" {
		return
	}
	step := Step{Seq: v.Seq, Schema: k.Schema, Table: k.Table, Def: def}
	switch {
	case verb == "TRUNCATE":
		step.Kind, step.What = StepEmpty, what+" empties it"
	case verb == "ALTER (partitions or tablespace)":
		l.Redump = what + " changes rows without row events"
		return
	case schema.SameShape(old, def):
		step.Kind, step.What = StepKeep, what+" keeps its rows (metadata only)"
	case !KeepsRows(v):
		l.Redump = fmt.Sprintf("%s changes its columns (%s) and the fold cannot prove how", what, ShapeDiff(old, def))
		return
	default:
		r, err := schema.PlanReshape(old, def, v.DDL)
		var re *schema.RedumpError
		switch {
		case errors.As(err, &re):
			l.Redump = fmt.Sprintf("%s: %s", what, re.Reason)
			return
		case err != nil:
			l.Redump = fmt.Sprintf("%s: %v", what, err)
			return
		}
		step.Kind, step.Reshape = StepReshape, &r
		step.What = fmt.Sprintf("%s reshapes its rows (%s)", what, ShapeDiff(old, def))
	}
	l.Steps = append(l.Steps, step)
}

// isRename reports whether a statement moved tables: RENAME TABLE, or an
// ALTER TABLE that removed one name and defined another.
func isRename(g []change.SchemaVersion) bool {
	switch Verb(g[0].DDL) {
	case "RENAME":
		return true
	case "ALTER":
		return slices.ContainsFunc(g, func(v change.SchemaVersion) bool { return v.Definition == nil }) &&
			slices.ContainsFunc(g, func(v change.SchemaVersion) bool { return v.Definition != nil })
	}
	return false
}

// schemaOf is the schema of an unqualified name in a statement: the schema
// of the statement's version of that name, else of its first version.
func schemaOf(g []change.SchemaVersion, name string) string {
	for _, v := range g {
		if v.Table == name {
			return v.Schema
		}
	}
	return g[0].Schema
}

// StoredDef is the definition a table file of d has (schema.Table.Stored),
// so that shapes are compared like with like. A definition that cannot be
// stored is kept as it is: it differs from every table file, and a
// comparison refuses it with the columns that differ. nil stays nil.
func StoredDef(d *schema.Table) *schema.Table {
	if d == nil {
		return nil
	}
	if s, err := d.Stored(); err == nil {
		return s
	}
	return d
}
