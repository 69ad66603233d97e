package restore

import (
	"fmt"
	"strings"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// loadKind says how a column's values are written as a LOAD DATA field.
type loadKind uint8

const (
	loadNumber loadKind = iota // the digits, checked to hold only number characters
	loadText                   // the text, escaped (loadEscape)
	loadHex                    // hex digits into a variable, stored by UNHEX
	loadYear                   // the digits into a variable, stored as a number
)

// LoadData renders rows of one table as the input of one LOAD DATA LOCAL
// INFILE statement (Statement): tab-separated fields, one line a row, in
// the table's stored columns (generated columns are not in t.Columns, so
// the target computes them). Each value loads as the same stored value
// as the `.sql` export's literal for it (sqlexport), under the same
// session settings (UTF-8, UTC, the export's sql_mode):
//
//   - integers, DECIMAL, FLOAT and DOUBLE: their text, which the server
//     parses as it parses the export's literal (strtod, correctly rounded,
//     for floating point); unquoted number characters only, so a damaged
//     value is refused, never loaded as something else;
//   - YEAR: its digits into a variable stored by CAST(@v AS SIGNED), since
//     a YEAR column reads the text '0' as 2000 and the number 0 as 0000
//     (the export writes the number);
//   - dates and times, character data, ENUM/SET labels, JSON, UUID/INET:
//     the UTF-8 text (the statement's CHARACTER SET utf8mb4, converted to
//     the column's charset as the export's SET NAMES utf8mb4 does), with
//     backslash, tab, newline, carriage return, NUL and Ctrl-Z escaped;
//   - binary, BLOB, BIT, GEOMETRY, character data with charset binary: hex
//     digits into a variable stored by UNHEX(@v), the bytes exactly (the
//     export's 0x… literal), whatever the statement's character set;
//   - NULL: \N, which no escaped value can be (a backslash is doubled).
type LoadData struct {
	t     *schema.Table
	kinds []loadKind
}

// NewLoadData prepares the fields of t's columns; an unsupported column
// type is an error naming the table and column.
func NewLoadData(t *schema.Table) (*LoadData, error) {
	d := &LoadData{t: t, kinds: make([]loadKind, len(t.Columns))}
	for i := range t.Columns {
		switch class, _ := rowimage.ClassOf(&t.Columns[i]); class {
		case rowimage.ClassInteger, rowimage.ClassDecimal, rowimage.ClassFloat, rowimage.ClassDouble:
			d.kinds[i] = loadNumber
		case rowimage.ClassYear:
			d.kinds[i] = loadYear
		case rowimage.ClassTemporal, rowimage.ClassText, rowimage.ClassAddress:
			d.kinds[i] = loadText
		case rowimage.ClassBinary:
			d.kinds[i] = loadHex
		default:
			return nil, fmt.Errorf("table %s: column %s: unsupported column type %q", t.QualifiedName(), t.Columns[i].Name, t.Columns[i].Type)
		}
	}
	return d, nil
}

// Statement is the LOAD DATA LOCAL INFILE statement that loads the rows
// AppendRow wrote, read from infile (a go-sql-driver/mysql
// "Reader::name"), into schemaName.table. Without IGNORE or REPLACE; the
// server still skips a duplicate key of a LOCAL load (it cannot stop the
// client's stream), so the caller compares the rows affected with the
// rows it sent.
func (d *LoadData) Statement(schemaName, table, infile string) string {
	var b strings.Builder
	b.WriteString("LOAD DATA LOCAL INFILE '" + strings.ReplaceAll(infile, "'", "''") + "' INTO TABLE ")
	b.WriteString(QuoteIdent(schemaName) + "." + QuoteIdent(table))
	b.WriteString(" CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\\t' ENCLOSED BY '' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' STARTING BY '' (")
	var sets []string
	for i := range d.t.Columns {
		if i > 0 {
			b.WriteByte(',')
		}
		col := QuoteIdent(d.t.Columns[i].Name)
		v := fmt.Sprintf("@v%d", i)
		switch d.kinds[i] {
		case loadHex:
			b.WriteString(v)
			sets = append(sets, col+" = UNHEX("+v+")")
		case loadYear:
			b.WriteString(v)
			sets = append(sets, col+" = CAST("+v+" AS SIGNED)")
		default:
			b.WriteString(col)
		}
	}
	b.WriteByte(')')
	if len(sets) > 0 {
		b.WriteString(" SET " + strings.Join(sets, ", "))
	}
	return b.String()
}

// AppendRow appends row as one line of fields to dst. n (1-based) names
// the row in an error.
func (d *LoadData) AppendRow(dst []byte, n int64, row []rowimage.Cell) ([]byte, error) {
	if len(row) != len(d.kinds) {
		return dst, fmt.Errorf("table %s row %d: %d values for %d columns", d.t.QualifiedName(), n, len(row), len(d.kinds))
	}
	for i, c := range row {
		if i > 0 {
			dst = append(dst, '\t')
		}
		if c.Null {
			dst = append(dst, '\\', 'N')
			continue
		}
		switch d.kinds[i] {
		case loadNumber, loadYear:
			if !numberText(c.Text, d.kinds[i] == loadYear) {
				return dst, fmt.Errorf("table %s row %d column %s: malformed number %q", d.t.QualifiedName(), n, d.t.Columns[i].Name, abbreviate(string(c.Text)))
			}
			dst = append(dst, c.Text...)
		case loadHex:
			for _, b := range c.Text {
				dst = append(dst, hexDigits[b>>4], hexDigits[b&15])
			}
		default:
			dst = loadEscape(dst, c.Text)
		}
	}
	return append(dst, '\n'), nil
}

const hexDigits = "0123456789abcdef"

// numberText reports whether v is a number's text: digits, a leading
// minus, and (unless digitsOnly) a decimal point and an exponent.
func numberText(v []byte, digitsOnly bool) bool {
	if len(v) == 0 {
		return false
	}
	for i, ch := range v {
		switch {
		case ch >= '0' && ch <= '9':
		case ch == '-' && i == 0:
		case digitsOnly:
			return false
		case ch == '.' || ch == '+' || ch == '-' || ch == 'e' || ch == 'E':
		default:
			return false
		}
	}
	return true
}

// loadEscape appends s with the escapes LOAD DATA's ESCAPED BY '\\'
// reads back: backslash, tab (the field separator), newline (the line
// separator), carriage return, NUL and Ctrl-Z; every other byte as it is.
func loadEscape(dst, s []byte) []byte {
	for _, ch := range s {
		switch ch {
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case 0:
			dst = append(dst, '\\', '0')
		case 0x1a:
			dst = append(dst, '\\', 'Z')
		default:
			dst = append(dst, ch)
		}
	}
	return dst
}
