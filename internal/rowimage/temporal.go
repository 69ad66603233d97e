package rowimage

import (
	"fmt"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// Temporal values stay in MySQL's own text form: zero dates and zero parts
// ("0000-00-00", "2026-00-00") are kept, nothing is parsed into time.Time and
// no zone is applied. Only the fraction is normalised to the column's FSP:
// go-mysql omits a zero TIME fraction and a caller may give fewer digits, so
// missing digits are padded with zeros; extra digits are accepted only when
// they are zeros (dropping others would lose data).

// digits2 reads two ASCII digits at b[i:i+2].
func digits2(b []byte, i int) (int, bool) {
	if i+2 > len(b) || !isDigit(b[i]) || !isDigit(b[i+1]) {
		return 0, false
	}
	return int(b[i]-'0')*10 + int(b[i+1]-'0'), true
}

// checkDate validates "YYYY-MM-DD" at b[0:10].
func checkDate(b []byte) bool {
	if len(b) < 10 || b[4] != '-' || b[7] != '-' {
		return false
	}
	if _, ok := digits2(b, 0); !ok {
		return false
	}
	if _, ok := digits2(b, 2); !ok {
		return false
	}
	m, ok1 := digits2(b, 5)
	d, ok2 := digits2(b, 8)
	return ok1 && ok2 && m <= 12 && d <= 31
}

// checkClock validates "MM:SS" at b[0:5] (minutes and seconds below 60).
func checkClock(b []byte) bool {
	if len(b) < 5 || b[2] != ':' {
		return false
	}
	m, ok1 := digits2(b, 0)
	s, ok2 := digits2(b, 3)
	return ok1 && ok2 && m < 60 && s < 60
}

func fsp(c *schema.Column) (int, error) {
	if c.FSP < 0 || c.FSP > 6 {
		return 0, fmt.Errorf("invalid fractional seconds precision %d", c.FSP)
	}
	return c.FSP, nil
}

// appendFrac appends '.' and exactly n fraction digits taken from frac (the
// digits after the dot, possibly empty). It reports false when frac is not all
// digits or has non-zero digits beyond n.
func appendFrac(dst []byte, frac []byte, n int) ([]byte, bool) {
	if len(frac) > 6 {
		return dst, false
	}
	for i, ch := range frac {
		if !isDigit(ch) || (i >= n && ch != '0') {
			return dst, false
		}
	}
	if n == 0 {
		return dst, true
	}
	dst = append(dst, '.')
	if len(frac) > n {
		frac = frac[:n]
	}
	dst = append(dst, frac...)
	for i := len(frac); i < n; i++ {
		dst = append(dst, '0')
	}
	return dst, true
}

// splitFrac splits "text.digits" into text and digits; a '.' must be followed
// by at least one digit.
func splitFrac(b []byte, at int) (head, frac []byte, ok bool) {
	if len(b) == at {
		return b, nil, true
	}
	if b[at] != '.' || len(b) == at+1 {
		return nil, nil, false
	}
	return b[:at], b[at+1:], true
}

// appendDate writes DATE text "YYYY-MM-DD".
func appendDate(dst []byte, c *schema.Column, b []byte) ([]byte, error) {
	if len(b) != 10 || !checkDate(b) {
		return dst, valueErr(c, fmt.Errorf("malformed date %q", b))
	}
	dst = append(dst, '"')
	dst = append(dst, b...)
	return append(dst, '"'), nil
}

// appendDatetime writes DATETIME/TIMESTAMP text "YYYY-MM-DD hh:mm:ss[.f]"
// with exactly FSP fraction digits.
func appendDatetime(dst []byte, c *schema.Column, b []byte) ([]byte, error) {
	n, err := fsp(c)
	if err != nil {
		return dst, valueErr(c, err)
	}
	bad := func() ([]byte, error) { return dst, valueErr(c, fmt.Errorf("malformed datetime %q", b)) }
	if len(b) < 19 || !checkDate(b) || b[10] != ' ' || b[13] != ':' {
		return bad()
	}
	if h, ok := digits2(b, 11); !ok || h > 23 || !checkClock(b[14:]) {
		return bad()
	}
	head, frac, ok := splitFrac(b, 19)
	if !ok {
		return bad()
	}
	out := append(dst, '"')
	out = append(out, head...)
	if out, ok = appendFrac(out, frac, n); !ok {
		return dst, valueErr(c, fmt.Errorf("datetime %q does not fit fsp %d", b, n))
	}
	return append(out, '"'), nil
}

// appendTime writes TIME text "[-]hh[h]:mm:ss[.f]" with at least two hour
// digits and exactly FSP fraction digits, hours at most 838.
func appendTime(dst []byte, c *schema.Column, b []byte) ([]byte, error) {
	n, err := fsp(c)
	if err != nil {
		return dst, valueErr(c, err)
	}
	bad := func() ([]byte, error) { return dst, valueErr(c, fmt.Errorf("malformed time %q", b)) }
	s := b
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg, s = true, s[1:]
	}
	h := 0
	i := 0
	for i < len(s) && isDigit(s[i]) {
		if i == 3 {
			return bad()
		}
		h = h*10 + int(s[i]-'0')
		i++
	}
	if i == 0 || i+6 > len(s) || s[i] != ':' || !checkClock(s[i+1:]) {
		return bad()
	}
	clock := s[i+1 : i+6]
	_, frac, ok := splitFrac(s, i+6)
	if !ok {
		return bad()
	}
	if h > 838 { // MariaDB allows up to 838:59:59.999999, MySQL up to 838:59:59
		return dst, valueErr(c, fmt.Errorf("time %q out of range", b))
	}
	if neg && h == 0 && string(clock) == "00:00" && isZeroDigits(frac) {
		neg = false
	}
	out := append(dst, '"')
	if neg {
		out = append(out, '-')
	}
	if h < 10 {
		out = append(out, '0')
	}
	out = appendUint(out, uint64(h))
	out = append(out, ':')
	out = append(out, clock...)
	if out, ok = appendFrac(out, frac, n); !ok {
		return dst, valueErr(c, fmt.Errorf("time %q does not fit fsp %d", b, n))
	}
	return append(out, '"'), nil
}
