package foldplan

import (
	"fmt"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/schemahist"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

func key(k TableKey) schemahist.Key { return schemahist.Key{Schema: k.Schema, Table: k.Table} }

// trace follows the previous snapshot's tables through the window's
// schema changes (schemahist.Trace: the rule the moment planner uses too).
func trace(w window, in Input) schemahist.Traced {
	start := map[schemahist.Key]*schema.Table{}
	for _, mt := range in.Prev.Tables {
		k := TableKey{mt.Schema, mt.Table}
		if f, ok := in.Footers[k]; ok && f.Table != nil {
			start[key(k)] = f.Table
		}
	}
	return schemahist.Trace(w.Window, start, in.Schemas)
}

// planLineages decides for every table at the cut that planTable does not:
// those a schema change renamed, reshaped, emptied or created (rewritten
// through their lineage), those it cannot prove (re-dumped), those a
// partial full backup re-dumped (rewritten from it), and a table at the cut
// with no origin at all (re-dumped).
func planLineages(in Input, tr schemahist.Traced, prev, planned map[TableKey]bool, gaps []string) []TablePlan {
	var out []TablePlan
	seen := map[TableKey]bool{}
	for _, k := range sortedKeys(in.Current) {
		cur := in.Current[k]
		seen[k] = true
		if cur == nil || planned[k] {
			continue
		}
		l, traced := tr.Tables[key(k)]
		_, redumped := in.Redumped[k]
		tp := TablePlan{Key: k, Changes: in.Changes[k]}
		switch {
		case len(gaps) > 0:
			tp.Action, tp.Reason = ActionRefuse, "refused: "+gapRefusal
		case redumped:
			tp = fromRedump(in, k, cur)
		case !traced && !prev[k]:
			tp.Action, tp.Reason = ActionRedump, "redump: not in the previous snapshot, and no CREATE of it in the window"
		case !traced:
			tp.Action, tp.Reason = ActionRefuse, "refused: the table file's definition is unknown (no footer)"
		case l.Redump != "":
			tp.Action, tp.Reason = ActionRedump, "redump: "+l.Redump
		case !schema.SameShape(l.Def, cur):
			tp.Action, tp.Reason = ActionRefuse, "refused: its schema history and its definition at the cut disagree: "+schemahist.ShapeDiff(l.Def, cur)
		default:
			tp.Action, tp.Lineage = ActionRewrite, &l
			tp.Reason = "rewrite: " + l.Describe()
			tp.Kind = kindOf(cur)
		}
		out = append(out, tp)
	}
	for k := range tr.Tables {
		if tk := (TableKey{k.Schema, k.Table}); !seen[tk] && !planned[tk] && !schema.IsSystemSchema(k.Schema) {
			out = append(out, TablePlan{Key: tk, Action: ActionRefuse,
				Reason: "refused: its schema history defines it at the cut, but the definitions at the cut do not"})
		}
	}
	return out
}

// fromRedump plans table k from its partial full backup: the window from
// the dump's position to the cut, traced again from the dump's definition.
func fromRedump(in Input, k TableKey, cur *schema.Table) TablePlan {
	rd := in.Redumped[k]
	tp := TablePlan{Key: k, Changes: in.Changes[k], Base: rd.SnapshotID, BaseSeq: rd.Seq}
	if rd.Seq > in.Cut {
		tp.Action, tp.Reason = ActionRefuse, fmt.Sprintf("refused: re-dumped at seq %d, after the cut %d", rd.Seq, in.Cut)
		return tp
	}
	w := schemahist.Window{FromSeq: rd.Seq, From: rd.Position.Coords(), ToSeq: in.Cut, To: in.CutPos}
	tr := schemahist.Trace(w, map[schemahist.Key]*schema.Table{key(k): rd.Def}, in.Schemas)
	l, ok := tr.Tables[key(k)]
	switch {
	case !ok || l.Base != key(k) || l.Created:
		tp.Action, tp.Reason = ActionRefuse, fmt.Sprintf("refused: re-dumped at seq %d, then renamed, dropped or replaced before the cut: take a full backup", rd.Seq)
	case l.Redump != "":
		tp.Action, tp.Reason = ActionRefuse, fmt.Sprintf("refused: re-dumped at seq %d, then %s: take a full backup", rd.Seq, l.Redump)
	case !schema.SameShape(l.Def, cur):
		tp.Action, tp.Reason = ActionRefuse, "refused: the re-dumped table's definition differs from the cut's: "+schemahist.ShapeDiff(l.Def, cur)
	default:
		tp.Action, tp.Kind = ActionRewrite, kindOf(cur)
		tp.Reason = fmt.Sprintf("rewrite: re-dumped alone at seq %d (partial snapshot %s), folded forward to the cut", rd.Seq, rd.SnapshotID)
		if len(l.Steps) > 0 {
			tp.Lineage = &l
			tp.Reason += "; " + l.Describe()
		}
	}
	return tp
}

// kindOf is a rewritten table's manifest kind.
func kindOf(cur *schema.Table) string {
	if snapshot.FullOnly(cur) {
		return snapshot.KindFull
	}
	return snapshot.KindDelta
}
