package shell

import (
	"fmt"
	"io"
	"strings"
	"unicode"
)

// maxCellWidth bounds a cell of the table format; longer values are cut
// with "…" (csv and json print them whole).
const maxCellWidth = 200

// writeTable writes the rows of r as an aligned table: a header, a rule,
// one line per row with numbers right-aligned, and the row count. NULL
// shows as NULL; control characters in a value show escaped (\n, \t, \r,
// \xHH) so that a row stays on one line.
func writeTable(w io.Writer, r *Result) (int, error) {
	right := make([]bool, len(r.Cols))
	widths := make([]int, len(r.Cols))
	header := make([]string, len(r.Cols))
	for i, c := range r.Cols {
		header[i] = cell(c)
		widths[i] = displayWidth(header[i])
		right[i] = numericType(r.Types[i])
	}
	var rows [][]string
	vals := make([]any, len(r.Cols))
	for {
		ok, err := r.Next(vals)
		if err != nil {
			return len(rows), err
		}
		if !ok {
			break
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = "NULL"
			if v != nil {
				row[i] = cell(text(v, r.Types[i]))
			}
			widths[i] = max(widths[i], displayWidth(row[i]))
		}
		rows = append(rows, row)
	}
	var b strings.Builder
	line := func(cells []string, alignRight func(int) bool) {
		for i, c := range cells {
			if i > 0 {
				b.WriteString(" |")
			}
			pad := strings.Repeat(" ", widths[i]-displayWidth(c))
			b.WriteByte(' ')
			if alignRight(i) {
				b.WriteString(pad + c)
			} else if i < len(cells)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
		}
		b.WriteByte('\n')
	}
	line(header, func(int) bool { return false })
	for i, wd := range widths {
		if i > 0 {
			b.WriteByte('+')
		}
		b.WriteString(strings.Repeat("-", wd+2))
	}
	b.WriteByte('\n')
	for _, row := range rows {
		line(row, func(i int) bool { return right[i] })
	}
	if len(rows) == 1 {
		b.WriteString("(1 row)\n")
	} else {
		fmt.Fprintf(&b, "(%d rows)\n", len(rows))
	}
	_, err := io.WriteString(w, b.String())
	return len(rows), err
}

// numericType reports whether a DuckDB type name is a number's.
func numericType(t string) bool {
	switch t {
	case "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
		"UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE":
		return true
	}
	return strings.HasPrefix(t, "DECIMAL")
}

// cell escapes control characters and cuts s at maxCellWidth.
func cell(s string) string {
	var b strings.Builder
	n := 0
	for _, c := range s {
		if n >= maxCellWidth {
			b.WriteString("…")
			break
		}
		switch {
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02X`, c)
		default:
			b.WriteRune(c)
		}
		n++
	}
	return b.String()
}

// displayWidth is the number of terminal columns s takes: combining marks
// take none, East Asian wide characters and emoji two.
func displayWidth(s string) int {
	n := 0
	for _, c := range s {
		switch {
		case unicode.Is(unicode.Mn, c) || unicode.Is(unicode.Me, c) || c == 0x200B || c == 0x200D || c == 0xFE0F:
		case wide(c):
			n += 2
		default:
			n++
		}
	}
	return n
}

// wide reports whether c is an East Asian wide or full-width character or
// an emoji of the common blocks.
func wide(c rune) bool {
	for _, r := range [][2]rune{
		{0x1100, 0x115F}, {0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF},
		{0xA000, 0xA4CF}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF}, {0xFE30, 0xFE4F}, {0xFF00, 0xFF60},
		{0xFFE0, 0xFFE6}, {0x1F300, 0x1F64F}, {0x1F900, 0x1F9FF}, {0x20000, 0x3FFFD},
	} {
		if c >= r[0] && c <= r[1] {
			return true
		}
	}
	return false
}
