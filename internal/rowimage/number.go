package rowimage

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// strBytes views s as bytes without copying. The result must never be written.
func strBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// bytesStr views b as a string without copying, for parsers that do not retain
// their argument (strconv clones the text it puts in errors).
func bytesStr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func appendUint(dst []byte, u uint64) []byte { return strconv.AppendUint(dst, u, 10) }

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

var errSyntax = errors.New("malformed value")

// parseIntText parses MySQL's text for an integer: an optional '-' and one or
// more decimal digits (leading zeros, as ZEROFILL prints, are allowed).
func parseIntText(b []byte) (mag uint64, neg bool, err error) {
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false, errSyntax
	}
	for _, ch := range b {
		if !isDigit(ch) {
			return 0, false, errSyntax
		}
		d := uint64(ch - '0')
		if mag > (math.MaxUint64-d)/10 {
			return 0, false, errors.New("integer overflows 64 bits")
		}
		mag = mag*10 + d
	}
	if mag == 0 {
		neg = false
	}
	return mag, neg, nil
}

// appendIntText canonicalises an integer read as text through the same range
// rules as a binlog value.
func appendIntText(dst []byte, c *schema.Column, bits uint, b []byte) ([]byte, error) {
	dst, _, _, err := intText(dst, c, bits, b)
	return dst, err
}

// intText is appendIntText that also returns the value's magnitude and sign
// (neg is false for zero).
func intText(dst []byte, c *schema.Column, bits uint, b []byte) ([]byte, uint64, bool, error) {
	mag, neg, err := parseIntText(b)
	if err != nil {
		return dst, 0, false, valueErr(c, fmt.Errorf("%w %q", err, b))
	}
	if neg {
		if mag > 1<<63 {
			return dst, 0, false, valueErr(c, fmt.Errorf("integer %q out of range", b))
		}
		if c.Unsigned {
			return dst, 0, false, valueErr(c, fmt.Errorf("negative value %q for unsigned column", b))
		}
	}
	dst, err = appendIntMag(dst, c, bits, mag, neg)
	return dst, mag, neg, err
}

// AppendSQLInt is AppendSQLValue for a non-NULL value of an integer column
// (ClassInteger, bits as ClassOf returns them) that also returns the value
// it canonicalised: the same text, the same errors, and the number, so that
// a caller needing both parses the text once. The value is int64(mag)
// negated when neg (a signed column's minimum included), else mag.
func AppendSQLInt(dst []byte, c *schema.Column, bits uint, raw []byte) (out []byte, mag uint64, neg bool, err error) {
	if bits == 0 || bits > 64 {
		return dst, 0, false, valueErr(c, fmt.Errorf("column type %q is not an integer type", c.Type))
	}
	n := len(dst)
	if out, mag, neg, err = intText(dst, c, bits, raw); err != nil {
		return dst[:n], 0, false, err
	}
	return out, mag, neg, nil
}

// appendDecimal writes DECIMAL text as a JSON string with exactly c.Scale
// fraction digits and no superfluous leading zeros, as MySQL prints it. Extra
// fraction digits are accepted only when they are zeros; an integer part
// longer than Precision-Scale digits is an error (when Precision is known).
func appendDecimal(dst []byte, c *schema.Column, b []byte) ([]byte, error) {
	s := b
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg = true
		s = s[1:]
	}
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intPart := s[:i]
	var frac []byte
	if i < len(s) {
		if s[i] != '.' {
			return dst, valueErr(c, fmt.Errorf("malformed decimal %q", b))
		}
		frac = s[i+1:]
		if len(frac) == 0 {
			return dst, valueErr(c, fmt.Errorf("malformed decimal %q", b))
		}
		for _, ch := range frac {
			if !isDigit(ch) {
				return dst, valueErr(c, fmt.Errorf("malformed decimal %q", b))
			}
		}
	}
	if len(intPart) == 0 {
		return dst, valueErr(c, fmt.Errorf("malformed decimal %q", b))
	}
	scale := c.Scale
	if len(frac) > scale {
		for _, ch := range frac[scale:] {
			if ch != '0' {
				return dst, valueErr(c, fmt.Errorf("decimal %q has more than %d fraction digits", b, scale))
			}
		}
		frac = frac[:scale]
	}
	for len(intPart) > 1 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	if c.Precision > 0 && !(len(intPart) == 1 && intPart[0] == '0') && len(intPart) > c.Precision-scale {
		return dst, valueErr(c, fmt.Errorf("decimal %q exceeds DECIMAL(%d,%d)", b, c.Precision, scale))
	}
	if neg && isZeroDigits(intPart) && isZeroDigits(frac) {
		neg = false
	}
	dst = append(dst, '"')
	if neg {
		dst = append(dst, '-')
	}
	dst = append(dst, intPart...)
	if scale > 0 {
		dst = append(dst, '.')
		dst = append(dst, frac...)
		for n := len(frac); n < scale; n++ {
			dst = append(dst, '0')
		}
	}
	return append(dst, '"'), nil
}

func isZeroDigits(b []byte) bool {
	for _, ch := range b {
		if ch != '0' {
			return false
		}
	}
	return true
}

// appendFloat writes f as the shortest text that round-trips a float32 (FLOAT)
// or float64 (DOUBLE).
func appendFloat(dst []byte, c *schema.Column, k kind, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, valueErr(c, fmt.Errorf("%v cannot be stored in MySQL", f))
	}
	if k == kFloat {
		return strconv.AppendFloat(dst, f, 'g', -1, 32), nil
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64), nil
}

// appendFloatText parses a FLOAT/DOUBLE printed by the server. A FLOAT column
// takes the text as a double and narrows it with float32(), which is exact for
// the output of CAST(col AS DOUBLE).
func appendFloatText(dst []byte, c *schema.Column, k kind, b []byte) ([]byte, error) {
	dst, _, err := floatText(dst, c, k, b)
	return dst, err
}

// floatText is appendFloatText that also returns the value (narrowed to
// float32 precision for FLOAT).
func floatText(dst []byte, c *schema.Column, k kind, b []byte) ([]byte, float64, error) {
	if len(b) == 0 {
		return dst, 0, valueErr(c, fmt.Errorf("empty float text"))
	}
	for _, ch := range b { // only what the server prints: no inf, nan, hex or '_'
		if !isDigit(ch) && ch != '-' && ch != '+' && ch != '.' && ch != 'e' && ch != 'E' {
			return dst, 0, valueErr(c, fmt.Errorf("malformed float %q", b))
		}
	}
	f, err := strconv.ParseFloat(bytesStr(b), 64)
	if err != nil {
		return dst, 0, valueErr(c, fmt.Errorf("malformed float %q", b))
	}
	if k == kFloat {
		f32 := float32(f)
		if math.IsInf(float64(f32), 0) {
			return dst, 0, valueErr(c, fmt.Errorf("%q is out of FLOAT range", b))
		}
		f = float64(f32)
	}
	dst, err = appendFloat(dst, c, k, f)
	return dst, f, err
}

// AppendSQLFloat is AppendSQLValue for a non-NULL value of a FLOAT or DOUBLE
// column (ClassFloat, ClassDouble) that also returns the value it
// canonicalised (a FLOAT narrowed to float32 precision): the same text, the
// same errors, and the number the text denotes.
func AppendSQLFloat(dst []byte, c *schema.Column, raw []byte) ([]byte, float64, error) {
	k, _ := kindOf(c)
	if k != kFloat && k != kDouble {
		return dst, 0, valueErr(c, fmt.Errorf("column type %q is not FLOAT or DOUBLE", c.Type))
	}
	out, f, err := floatText(dst, c, k, raw)
	if err != nil {
		return dst, 0, err
	}
	return out, f, nil
}
