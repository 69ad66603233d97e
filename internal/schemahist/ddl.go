package schemahist

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// Verb names a schema version's statement by its first keyword after
// comments, for messages and rules: ALTER, CREATE, DROP, RENAME, TRUNCATE,
// "ALTER (partitions or tablespace)", "a redefinition from a binlog table
// map", "a definition read from the source" (a comment only), or DDL.
func Verb(ddl string) string {
	s := strings.TrimSpace(ddl)
	for {
		switch {
		case strings.HasPrefix(s, "/*"):
			if i := strings.Index(s, "*/"); i >= 0 {
				s = strings.TrimSpace(s[i+2:])
				continue
			}
			return "DDL"
		case strings.HasPrefix(s, "--") || strings.HasPrefix(s, "#"):
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				s = strings.TrimSpace(s[i+1:])
				continue
			}
			if strings.Contains(s, "table map") {
				return "a redefinition from a binlog table map"
			}
			return "a definition read from the source"
		}
		break
	}
	word, rest, _ := strings.Cut(s, " ")
	switch word = strings.ToUpper(word); word {
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

// KeepsRows reports whether schema version v changes no row of its table
// by itself: an ALTER TABLE or CREATE/DROP INDEX without partitions or
// tablespaces (whether it changed the columns is the caller's to check).
func KeepsRows(v change.SchemaVersion) bool {
	if v.Definition == nil {
		return false
	}
	u := strings.ToUpper(v.DDL)
	switch Verb(v.DDL) {
	case "ALTER":
		return true
	case "CREATE", "DROP":
		return strings.Contains(u, "INDEX") && !strings.Contains(u, "TABLE") &&
			!strings.Contains(u, "PARTITION") && !strings.Contains(u, "TABLESPACE")
	}
	return false
}

// Abbreviate folds s's white space and cuts it to n runes, for messages.
func Abbreviate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// ShapeDiff says how b's columns and key differ from a's: at most four
// differences, each column's attributes spelt as schema.SameShape compares
// them.
func ShapeDiff(a, b *schema.Table) string {
	var d []string
	in := func(t *schema.Table, name string) (schema.Column, bool) {
		i := slices.IndexFunc(t.Columns, func(c schema.Column) bool { return c.Name == name })
		if i < 0 {
			return schema.Column{}, false
		}
		return t.Columns[i], true
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
