package foldplan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// window is (previous snapshot position, cut], by seq and binlog position.
type window struct {
	fromSeq, toSeq uint64
	from, to       binlogpos.Position
}

func newWindow(in Input) window {
	w := window{toSeq: in.Cut, to: in.CutPos,
		from: binlogpos.Position{File: in.Prev.Position.File, Pos: in.Prev.Position.Pos}}
	if in.Prev.Position.Seq > 0 {
		w.fromSeq = in.Prev.Position.Seq
	}
	return w
}

// holds reports whether a schema version applies inside the window. Between
// the end seqs the seq decides; at an end seq (a DDL after the last event of
// a transaction carries that event's seq) the binlog position decides, and
// a position that cannot be ordered counts as inside (the safe side).
func (w window) holds(v index.SchemaVersion) bool {
	if v.Seq < w.fromSeq || v.Seq > w.toSeq {
		return false
	}
	p := binlogpos.Position{File: v.BinlogFile, Pos: v.BinlogPos}
	if v.Seq == w.fromSeq {
		if c, err := binlogpos.Compare(p, w.from); err == nil && c <= 0 {
			return false
		}
	}
	if v.Seq == w.toSeq {
		if c, err := binlogpos.Compare(p, w.to); err == nil && c > 0 {
			return false
		}
	}
	return true
}

// windowVersions are the schema versions inside the window, per table and
// all together, in stream order.
type windowVersions struct {
	of  map[TableKey][]index.SchemaVersion
	all []index.SchemaVersion
}

func (w window) versions(vs []index.SchemaVersion) windowVersions {
	out := windowVersions{of: map[TableKey][]index.SchemaVersion{}}
	for _, v := range vs {
		if w.holds(v) {
			out.all = append(out.all, v)
		}
	}
	slices.SortStableFunc(out.all, func(a, b index.SchemaVersion) int {
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
	slices.SortStableFunc(gaps, func(a, b index.Gap) int { return cmp.Compare(a.ID, b.ID) })
	for _, g := range gaps {
		from := binlogpos.Position{File: g.FromFile, Pos: g.FromPos}
		to := binlogpos.Position{File: g.ToFile, Pos: g.ToPos}
		c1, err1 := binlogpos.Compare(from, w.to)
		c2, err2 := binlogpos.Compare(to, w.from)
		switch {
		case err1 != nil || err2 != nil:
			why = append(why, fmt.Sprintf("capture gap #%d (%s to %s) cannot be ordered against the window (%s, %s]: %v",
				g.ID, from, to, w.from, w.to, cmp.Or(err1, err2)))
		case c1 < 0 && c2 > 0:
			why = append(why, fmt.Sprintf("the window (%s, %s] crossed capture gap #%d (%s to %s: %s): the index lacks its changes, take a full backup",
				w.from, w.to, g.ID, from, to, g.Reason))
		}
	}
	return why
}

// refusal returns why a previous table cannot be refreshed, or "".
func refusal(vs []index.SchemaVersion, all []index.SchemaVersion, def, cur *schema.Table) string {
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
		why = append(why, "columns differ from the table file: "+shapeDiff(def, cur))
	}
	return strings.Join(why, "; ")
}

// describeVersions names the schema changes of one table in the window.
func describeVersions(vs, all []index.SchemaVersion) string {
	const show = 3
	var parts []string
	for i, v := range vs {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(vs)-show))
			break
		}
		what := ddlVerb(v.DDL) + fmt.Sprintf(" at seq %d", v.Seq)
		if v.Definition == nil {
			if to, ok := renamedTo(v, all); ok {
				what += " renames it to " + to.String()
			} else {
				what += " removes it"
			}
		}
		parts = append(parts, what+" (`"+abbreviate(v.DDL, 100)+"`)")
	}
	n := "a schema change"
	if len(vs) > 1 {
		n = fmt.Sprintf("%d schema changes", len(vs))
	}
	return n + " in the window: " + strings.Join(parts, ", ")
}

// renamedTo finds the table a removing version's statement created under
// another name (RENAME TABLE, ALTER TABLE ... RENAME).
func renamedTo(v index.SchemaVersion, all []index.SchemaVersion) (TableKey, bool) {
	for _, o := range all {
		if o.Seq == v.Seq && o.BinlogFile == v.BinlogFile && o.BinlogPos == v.BinlogPos && o.DDL == v.DDL &&
			o.Definition != nil && (o.Schema != v.Schema || o.Table != v.Table) {
			return TableKey{o.Schema, o.Table}, true
		}
	}
	return TableKey{}, false
}

// ddlVerb names a statement by its first keyword, after comments.
func ddlVerb(ddl string) string {
	s := strings.TrimSpace(ddl)
	for {
		switch {
		case strings.HasPrefix(s, "/*"):
			if i := strings.Index(s, "*/"); i >= 0 {
				s = strings.TrimSpace(s[i+2:])
				continue
			}
			s = ""
		case strings.HasPrefix(s, "--") || strings.HasPrefix(s, "#"):
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				s = strings.TrimSpace(s[i+1:])
				continue
			}
			if strings.Contains(s, "table map") {
				return "a redefinition from a binlog table map"
			}
			s = ""
		}
		break
	}
	word, rest, _ := strings.Cut(s, " ")
	word = strings.ToUpper(word)
	switch word {
	case "TRUNCATE", "DROP", "RENAME", "CREATE":
		return word
	case "ALTER":
		if u := strings.ToUpper(rest); strings.Contains(u, "PARTITION") || strings.Contains(u, "TABLESPACE") {
			return "ALTER (partitions or tablespace)"
		}
		return word
	}
	return "DDL"
}

func abbreviate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// shapeDiff says how b's columns and key differ from a's.
func shapeDiff(a, b *schema.Table) string {
	var d []string
	in := func(t *schema.Table, name string) (schema.Column, bool) {
		for _, c := range t.Columns {
			if c.Name == name {
				return c, true
			}
		}
		return schema.Column{}, false
	}
	for _, c := range a.Columns {
		if _, ok := in(b, c.Name); !ok {
			d = append(d, "column "+c.Name+" dropped")
		}
	}
	for _, c := range b.Columns {
		old, ok := in(a, c.Name)
		switch {
		case !ok:
			d = append(d, "column "+c.Name+" added")
		case colText(old) != colText(c):
			d = append(d, fmt.Sprintf("column %s: %s → %s", c.Name, colText(old), colText(c)))
		}
	}
	if len(d) == 0 && !slices.Equal(a.ColumnNames(), b.ColumnNames()) {
		d = append(d, "column order changed")
	}
	if a.KeyKind != b.KeyKind || !slices.Equal(a.Key, b.Key) {
		d = append(d, fmt.Sprintf("key %s(%s) → %s(%s)", a.KeyKind, strings.Join(a.Key, ","), b.KeyKind, strings.Join(b.Key, ",")))
	}
	if len(d) > 4 {
		d = append(d[:4], fmt.Sprintf("and %d more", len(d)-4))
	}
	return cmp.Or(strings.Join(d, ", "), "definitions differ")
}

// colText spells every attribute schema.SameShape compares.
func colText(c schema.Column) string {
	s := c.Type
	if len(c.Elems) > 0 {
		s += fmt.Sprintf("%q", c.Elems)
	}
	if c.Precision > 0 || c.Scale > 0 {
		s += fmt.Sprintf("(%d,%d)", c.Precision, c.Scale)
	}
	if c.Length > 0 {
		s += fmt.Sprintf("(%d)", c.Length)
	}
	if c.FSP > 0 {
		s += fmt.Sprintf("(fsp %d)", c.FSP)
	}
	if c.Unsigned {
		s += " unsigned"
	}
	if c.Charset != "" {
		s += " " + c.Charset
	}
	if c.Nullable {
		return s + " null"
	}
	return s + " not null"
}
