package moment

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// Schema versions carry the seq of the last event before them (a DDL
// right after a transaction carries that transaction's last seq), so at a
// window's ends the binlog position decides: docs/positions.md.

// atOrBefore reports whether schema version v applies at a cut at seq cut,
// binlog position pos: it comes before the cut's seq, or at it and not
// after its position. A version at the cut's seq whose position cannot be
// ordered counts as applying.
func atOrBefore(v index.SchemaVersion, cut uint64, pos binlogpos.Position) bool {
	if v.Seq != cut {
		return v.Seq < cut
	}
	if pos.File == "" {
		return true
	}
	c, err := binlogpos.Compare(binlogpos.Position{File: v.BinlogFile, Pos: v.BinlogPos}, pos)
	return err != nil || c <= 0
}

// window is (from, to] by seq and binlog position.
type window struct {
	fromSeq, toSeq uint64
	from, to       binlogpos.Position
}

// holds reports whether schema version v applies inside w: strictly after
// its start and at or before its end (a position that cannot be ordered
// counts as inside).
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
	if v.Seq == w.toSeq && w.to.File != "" {
		if c, err := binlogpos.Compare(p, w.to); err == nil && c > 0 {
			return false
		}
	}
	return true
}

// ddlVerb names a statement by its first keyword after comments.
func ddlVerb(ddl string) string {
	s := strings.TrimSpace(ddl)
	for strings.HasPrefix(s, "/*") || strings.HasPrefix(s, "--") || strings.HasPrefix(s, "#") {
		if strings.HasPrefix(s, "/*") {
			i := strings.Index(s, "*/")
			if i < 0 {
				return "DDL"
			}
			s = strings.TrimSpace(s[i+2:])
			continue
		}
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			if strings.Contains(s, "table map") {
				return "a redefinition from a binlog table map"
			}
			return "a definition read from the source"
		}
		s = strings.TrimSpace(s[i+1:])
	}
	word, _, _ := strings.Cut(s, " ")
	switch w := strings.ToUpper(word); w {
	case "ALTER", "CREATE", "DROP", "RENAME", "TRUNCATE":
		return w
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
	col := func(t *schema.Table, name string) (schema.Column, bool) {
		i := slices.IndexFunc(t.Columns, func(c schema.Column) bool { return c.Name == name })
		if i < 0 {
			return schema.Column{}, false
		}
		return t.Columns[i], true
	}
	for _, c := range a.Columns {
		if _, ok := col(b, c.Name); !ok {
			d = append(d, "column "+c.Name+" dropped")
		}
	}
	for _, c := range b.Columns {
		old, ok := col(a, c.Name)
		switch {
		case !ok:
			d = append(d, "column "+c.Name+" added")
		case !schema.SameShape(&schema.Table{Columns: []schema.Column{old}}, &schema.Table{Columns: []schema.Column{c}}):
			d = append(d, "column "+c.Name+" redefined")
		}
	}
	if len(d) == 0 && !slices.Equal(a.ColumnNames(), b.ColumnNames()) {
		d = append(d, "column order changed")
	}
	if a.KeyKind != b.KeyKind || !slices.Equal(a.Key, b.Key) {
		d = append(d, fmt.Sprintf("key %s(%s) → %s(%s)", a.KeyKind, strings.Join(a.Key, ","), b.KeyKind, strings.Join(b.Key, ",")))
	}
	if len(d) == 0 {
		return "definitions differ"
	}
	if len(d) > 4 {
		d = append(d[:4], fmt.Sprintf("and %d more", len(d)-4))
	}
	return strings.Join(d, ", ")
}
