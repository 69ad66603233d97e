package rowimage

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"unicode/utf8"

	"github.com/dbtrail/dbtrail/internal/schema"
)

const hexLower = "0123456789abcdef"

// jsonEscape[b] is the escape for byte b inside a JSON string, or "" when b is
// written as is. Only '"', '\\' and controls below 0x20 are escaped.
var jsonEscape = func() (t [256]string) {
	for b := 0; b < 0x20; b++ {
		t[b] = `\u00` + string(hexLower[b>>4]) + string(hexLower[b&15])
	}
	t['\b'], t['\f'], t['\n'], t['\r'], t['\t'] = `\b`, `\f`, `\n`, `\r`, `\t`
	t['"'], t['\\'] = `\"`, `\\`
	return t
}()

// appendJSONBody appends the escaped text of b (valid UTF-8) without quotes:
// b is copied as is apart from the escapes of jsonEscape.
func appendJSONBody(dst, b []byte) []byte {
	start := 0
	for i := 0; i < len(b); i++ {
		if e := jsonEscape[b[i]]; e != "" {
			dst = append(dst, b[start:i]...)
			dst = append(dst, e...)
			start = i + 1
		}
	}
	return append(dst, b[start:]...)
}

// Bytes of a word, for plainASCII8.
const (
	lsb8 = 0x0101010101010101
	msb8 = 0x8080808080808080
)

// plainASCII8 reports whether the 8 bytes of v are all ASCII that a JSON
// string holds as they are: no byte >= 0x80, < 0x20, '"' or '\\' (the escapes
// of jsonEscape). It tests the eight at once (SWAR: a byte is zero iff
// (x-1) & ^x has its high bit set).
func plainASCII8(v uint64) bool {
	if v&msb8 != 0 {
		return false
	}
	control := (v - 0x20*lsb8) & ^v & msb8
	q := v ^ '"'*lsb8
	quote := (q - lsb8) & ^q & msb8
	s := v ^ '\\'*lsb8
	slash := (s - lsb8) & ^s & msb8
	return control|quote|slash == 0
}

// appendValidJSONString appends b as a JSON string, validating UTF-8 in the
// same pass; it reports false (with dst's content undefined past its
// original length) when b is not valid UTF-8.
func appendValidJSONString(dst, b []byte) ([]byte, bool) {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(b); {
		if i+8 <= len(b) && plainASCII8(binary.LittleEndian.Uint64(b[i:])) {
			i += 8 // eight bytes copied as they are
			continue
		}
		ch := b[i]
		if ch < utf8.RuneSelf {
			if e := jsonEscape[ch]; e != "" {
				dst = append(dst, b[start:i]...)
				dst = append(dst, e...)
				start = i + 1
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return dst, false
		}
		i += n
	}
	dst = append(dst, b[start:]...)
	return append(dst, '"'), true
}

// appendUTF8 validates b as UTF-8 and appends it as a JSON string.
func appendUTF8(dst []byte, c *schema.Column, b []byte) ([]byte, error) {
	out, ok := appendValidJSONString(dst, b)
	if !ok {
		return dst, valueErr(c, fmt.Errorf("invalid UTF-8 at byte %d for charset %q", invalidAt(b), c.Charset))
	}
	return out, nil
}

func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// appendCharData writes character data as the binlog carries it: in the
// column's charset. UTF-8 family charsets and ascii are validated, latin1 is
// converted to UTF-8; other charsets are refused rather than guessed.
func appendCharData(dst []byte, c *schema.Column, b []byte) ([]byte, error) {
	switch c.Charset {
	case "utf8mb4", "utf8mb3", "utf8", "ascii", "":
		return appendUTF8(dst, c, b)
	case "latin1":
		return appendLatin1(dst, b), nil
	case "binary":
		return appendBinary(dst, c, kBinary, b)
	}
	return dst, valueErr(c, fmt.Errorf("unsupported charset %q", c.Charset))
}

// latin1High maps MySQL latin1 bytes 0x80..0x9F to Unicode: Windows-1252,
// with its five undefined bytes (0x81, 0x8D, 0x8F, 0x90, 0x9D) mapped to the
// C1 controls of the same value, as MySQL's strings/ctype-latin1 cs_to_uni
// does. Bytes 0xA0..0xFF map to the code point of the same value.
var latin1High = [32]rune{
	0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
	0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
}

func latin1Rune(b byte) rune {
	if b >= 0x80 && b < 0xA0 {
		return latin1High[b-0x80]
	}
	return rune(b)
}

// appendLatin1 converts MySQL latin1 bytes to UTF-8 and appends them as a JSON
// string. Every byte value is defined, so this cannot fail.
func appendLatin1(dst, b []byte) []byte {
	dst = append(dst, '"')
	for _, ch := range b {
		switch {
		case ch >= 0x80:
			dst = utf8.AppendRune(dst, latin1Rune(ch))
		case jsonEscape[ch] != "":
			dst = append(dst, jsonEscape[ch]...)
		default:
			dst = append(dst, ch)
		}
	}
	return append(dst, '"')
}

// appendLabel writes an ENUM/SET value given as its label text (SELECT output,
// already UTF-8).
func appendLabel(dst []byte, c *schema.Column, b []byte) ([]byte, error) {
	return appendUTF8(dst, c, b)
}

// appendEnum writes ENUM index i as its label: 0 is the empty-string error
// value, 1..len(Elems) the labels in declaration order.
func appendEnum(dst []byte, c *schema.Column, i uint64) ([]byte, error) {
	if i == 0 {
		return append(dst, `""`...), nil
	}
	if i > uint64(len(c.Elems)) {
		return dst, valueErr(c, fmt.Errorf("ENUM index %d out of range (%d labels)", i, len(c.Elems)))
	}
	return appendUTF8(dst, c, strBytes(c.Elems[i-1]))
}

// appendSet writes a SET bitmask as its labels joined by "," in declaration
// order (bit 0 is the first label).
func appendSet(dst []byte, c *schema.Column, mask uint64) ([]byte, error) {
	if n := len(c.Elems); n < 64 && mask>>uint(n) != 0 {
		return dst, valueErr(c, fmt.Errorf("SET mask %#x has bits beyond its %d labels", mask, n))
	}
	n := len(dst)
	dst = append(dst, '"')
	first := true
	for m := mask; m != 0; m &= m - 1 {
		label := c.Elems[bits.TrailingZeros64(m)]
		if !utf8.ValidString(label) {
			return dst[:n], valueErr(c, fmt.Errorf("SET label %q is not UTF-8", label))
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendJSONBody(dst, strBytes(label))
	}
	return append(dst, '"'), nil
}

// appendJSONDoc writes a JSON column's value as a JSON string holding the
// document text exactly as SELECT prints it.
//
// The value's Go type says where it comes from. A string is go-mysql's
// rendering of MySQL's binary JSON (RenderJSONAsMySQLText=true: MySQL's key
// order, compact): whitespace is not data there, so it is re-printed the way
// MySQL's SELECT prints a document, with ", " between members and ": " after
// keys and no other whitespace outside strings. []byte (and all SELECT text)
// is stored text, e.g. MariaDB's JSON, which is LONGTEXT: it is kept byte for
// byte. An empty value is the JSON null literal: MySQL reads an empty binary
// document (left by a lenient INSERT into a NOT NULL column) as null.
func appendJSONDoc(dst []byte, c *schema.Column, b []byte, binaryJSON bool) ([]byte, error) {
	if len(b) == 0 {
		return append(dst, `"null"`...), nil
	}
	if !binaryJSON {
		return appendUTF8(dst, c, b)
	}
	if !utf8.Valid(b) {
		return dst, valueErr(c, fmt.Errorf("JSON text is not UTF-8 at byte %d", invalidAt(b)))
	}
	if !json.Valid(b) {
		return dst, valueErr(c, fmt.Errorf("malformed JSON text"))
	}
	dst = append(dst, '"')
	inStr, esc := false, false
	for _, ch := range b {
		space := false
		if !inStr {
			switch ch {
			case ' ', '\t', '\n', '\r':
				continue
			case '"':
				inStr = true
			case ',', ':':
				space = true
			}
		} else if esc {
			esc = false
		} else if ch == '\\' {
			esc = true
		} else if ch == '"' {
			inStr = false
		}
		if e := jsonEscape[ch]; e != "" {
			dst = append(dst, e...)
		} else {
			dst = append(dst, ch)
		}
		if space {
			dst = append(dst, ' ')
		}
	}
	return append(dst, '"'), nil
}
