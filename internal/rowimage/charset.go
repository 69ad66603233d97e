package rowimage

import (
	"fmt"
	"unicode/utf8"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// IsCharacter reports whether c holds character data whose bytes are in the
// column's charset (CHAR, VARCHAR, TEXT types, ENUM, SET), as opposed to
// numbers, temporals, binary or JSON.
func IsCharacter(c *schema.Column) bool {
	switch c.Type {
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set":
		return c.Charset != "binary"
	}
	return false
}

// ToUTF8 appends character data b, given in column c's charset as a dump or
// the binlog carries it, to dst as UTF-8: the UTF-8 family and ascii are
// validated, latin1 is converted (MySQL's latin1 is Windows-1252 with its
// five undefined bytes as C1 controls), other charsets are refused rather
// than guessed.
func ToUTF8(dst []byte, c *schema.Column, b []byte) ([]byte, error) {
	switch c.Charset {
	case "utf8mb4", "utf8mb3", "utf8", "ascii", "":
		if !utf8.Valid(b) {
			return dst, valueErr(c, fmt.Errorf("invalid UTF-8 at byte %d", invalidAt(b)))
		}
		return append(dst, b...), nil
	case "latin1":
		for _, ch := range b {
			if ch < 0x80 {
				dst = append(dst, ch)
			} else {
				dst = utf8.AppendRune(dst, latin1Rune(ch))
			}
		}
		return dst, nil
	}
	return dst, valueErr(c, fmt.Errorf("unsupported charset %q", c.Charset))
}
