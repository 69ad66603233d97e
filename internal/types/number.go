package types

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
	mag, neg, err := parseIntText(b)
	if err != nil {
		return dst, valueErr(c, fmt.Errorf("%w %q", err, b))
	}
	if neg {
		if mag > 1<<63 {
			return dst, valueErr(c, fmt.Errorf("integer %q out of range", b))
		}
		if c.Unsigned {
			return dst, valueErr(c, fmt.Errorf("negative value %q for unsigned column", b))
		}
	}
	return appendIntMag(dst, c, bits, mag, neg)
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
	if len(b) == 0 {
		return dst, valueErr(c, fmt.Errorf("empty float text"))
	}
	for _, ch := range b { // only what the server prints: no inf, nan, hex or '_'
		if !isDigit(ch) && ch != '-' && ch != '+' && ch != '.' && ch != 'e' && ch != 'E' {
			return dst, valueErr(c, fmt.Errorf("malformed float %q", b))
		}
	}
	f, err := strconv.ParseFloat(bytesStr(b), 64)
	if err != nil {
		return dst, valueErr(c, fmt.Errorf("malformed float %q", b))
	}
	if k == kFloat {
		f32 := float32(f)
		if math.IsInf(float64(f32), 0) {
			return dst, valueErr(c, fmt.Errorf("%q is out of FLOAT range", b))
		}
		f = float64(f32)
	}
	return appendFloat(dst, c, k, f)
}
