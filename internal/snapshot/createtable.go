package snapshot

import (
	"strings"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// CreateTableSQL renders a CREATE TABLE statement of t's columns (their
// exact types, character sets and nullability) and indexes, for a shape
// whose original statement dbtrail does not hold (a table after an ALTER).
// It has no defaults, comments, engine or AUTO_INCREMENT, and generated
// columns (whose expressions are not kept) are left out; it starts with a
// comment saying so.
func CreateTableSQL(t *schema.Table) string {
	var b strings.Builder
	b.WriteString("/* rebuilt by dbtrail from its schema history: columns, character sets, nullability and keys; no defaults or options */ ")
	b.WriteString("CREATE TABLE " + quoteID(t.Name) + " (\n")
	var lines []string
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Generated != "" {
			continue
		}
		line := "  " + quoteID(c.Name) + " " + MySQLType(c)
		switch c.Type {
		case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set":
			if c.Charset != "" {
				line += " CHARACTER SET " + c.Charset
			}
		}
		if !c.Nullable {
			line += " NOT NULL"
		} else if c.Type == "timestamp" {
			line += " NULL"
		}
		lines = append(lines, line)
	}
	cols := func(names []string) string {
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = quoteID(n)
		}
		return "(" + strings.Join(q, ",") + ")"
	}
	hasPrimary := false
	for _, ix := range t.Indexes {
		if len(ix.Columns) == 0 || ix.Partial {
			continue
		}
		switch {
		case ix.Primary:
			hasPrimary = true
			lines = append(lines, "  PRIMARY KEY "+cols(ix.Columns))
		case ix.Unique:
			lines = append(lines, "  UNIQUE KEY "+quoteID(ix.Name)+" "+cols(ix.Columns))
		default:
			lines = append(lines, "  KEY "+quoteID(ix.Name)+" "+cols(ix.Columns))
		}
	}
	if !hasPrimary && t.KeyKind == schema.KeyPrimary && len(t.Key) > 0 {
		lines = append(lines, "  PRIMARY KEY "+cols(t.Key))
	}
	b.WriteString(strings.Join(lines, ",\n"))
	b.WriteString("\n)")
	if t.Charset != "" {
		b.WriteString(" DEFAULT CHARSET=" + t.Charset)
	}
	return b.String()
}

func quoteID(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
