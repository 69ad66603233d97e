package sqlexport

import (
	"fmt"
	"strings"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// literalKind says how a column's values are written as SQL literals.
type literalKind uint8

const (
	litInteger literalKind = iota // digits, unquoted
	litFloat                      // shortest round-trip text, unquoted, always with an exponent
	litString                     // single-quoted, escaped
	litHex                        // 0x..., or '' when empty
)

// literalKindOf maps a column to its literal form through the one
// classification of internal/rowimage. An unsupported type is an error naming
// the column.
func literalKindOf(c *schema.Column) (literalKind, error) {
	switch class, _ := rowimage.ClassOf(c); class {
	case rowimage.ClassInteger, rowimage.ClassYear:
		return litInteger, nil
	case rowimage.ClassFloat, rowimage.ClassDouble:
		return litFloat, nil
	case rowimage.ClassDecimal, rowimage.ClassTemporal, rowimage.ClassText, rowimage.ClassAddress:
		return litString, nil
	case rowimage.ClassBinary:
		return litHex, nil
	}
	return 0, fmt.Errorf("column %s: unsupported column type %q", c.Name, c.Type)
}

// appendLiteral appends value v (the SQL text form a snapshot.TableReader
// gives) as a SQL literal that loads back into the column as the
// same stored value, under the session settings of the export header:
//
//   - integers and YEAR: the digits (YEAR 0 is the number 0, which loads as
//     0000, where the string '0' would load as 2000);
//   - FLOAT/DOUBLE: the shortest round-trip text, with "e0" added when it has
//     no exponent, so that it is read as a double (strtod, correctly rounded)
//     and "-0" keeps its sign; a FLOAT column narrows that double exactly;
//   - DECIMAL: the exact text, quoted (string to DECIMAL conversion is exact);
//   - dates and times, character data, ENUM/SET labels, JSON text and
//     UUID/INET6/INET4 text: quoted, see appendQuoted;
//   - binary, BLOB, BIT, GEOMETRY, character data with charset binary: a hex
//     literal 0x…, or an empty string literal when empty.
//
// Unquoted values are checked to hold only number characters, so a damaged
// value can never become SQL.
func appendLiteral(dst []byte, k literalKind, c rowimage.Cell) ([]byte, error) {
	if c.Null {
		return append(dst, "NULL"...), nil
	}
	v := c.Text
	switch k {
	case litInteger, litFloat:
		if len(v) == 0 {
			return dst, fmt.Errorf("empty number")
		}
		exp := false
		for i, ch := range v {
			switch {
			case ch >= '0' && ch <= '9':
			case ch == '-' && i == 0:
			case k == litFloat && (ch == '.' || ch == '+' || ch == '-'):
			case k == litFloat && (ch == 'e' || ch == 'E'):
				exp = true
			default:
				return dst, fmt.Errorf("malformed number %q", abbreviate(v))
			}
		}
		dst = append(dst, v...)
		if k == litFloat && !exp {
			dst = append(dst, "e0"...)
		}
		return dst, nil
	case litHex:
		if len(v) == 0 {
			return append(dst, "''"...), nil
		}
		dst = append(dst, '0', 'x')
		for _, b := range v {
			dst = append(dst, hexDigits[b>>4], hexDigits[b&15])
		}
		return dst, nil
	}
	return appendQuoted(dst, v), nil
}

const hexDigits = "0123456789abcdef"

// appendQuoted appends s as a single-quoted SQL string with the escapes of
// mysql_real_escape_string: NUL, newline, carriage return, backslash, quote,
// double quote and Ctrl-Z (0x1A) become \0 \n \r \\ \' \" \Z; every other
// byte, UTF-8 included, is written as it is. The result is valid while
// NO_BACKSLASH_ESCAPES is off, which the export header's sql_mode ensures.
func appendQuoted(dst, s []byte) []byte {
	dst = append(dst, '\'')
	for _, ch := range s {
		switch ch {
		case 0:
			dst = append(dst, '\\', '0')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\'':
			dst = append(dst, '\\', '\'')
		case '"':
			dst = append(dst, '\\', '"')
		case 0x1a:
			dst = append(dst, '\\', 'Z')
		default:
			dst = append(dst, ch)
		}
	}
	return append(dst, '\'')
}

// quoteIdent quotes a schema, table or column name with backticks, doubling
// any backtick inside.
func quoteIdent(name string) string {
	b := make([]byte, 0, len(name)+2)
	b = append(b, '`')
	for i := 0; i < len(name); i++ {
		if name[i] == '`' {
			b = append(b, '`')
		}
		b = append(b, name[i])
	}
	return string(append(b, '`'))
}

// abbreviate cuts v to 64 bytes for messages.
func abbreviate(v []byte) string {
	if len(v) > 64 {
		return fmt.Sprintf("%s… (%d bytes)", v[:64], len(v))
	}
	return string(v)
}

// comment makes s safe inside a "-- " comment line: control characters (a
// newline in a quoted table name would end the comment) become '?'.
func comment(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}
