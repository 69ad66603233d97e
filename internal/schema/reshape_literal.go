package schema

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// storedForm returns the text a table file stores (what SELECT prints
// through database/sql, as a snapshot's reader gives it back) for the
// constant l stored in column n, and false when this code does not know it
// for sure: a conversion that rounds, truncates, depends on the session
// (time zone, connection charset, sql_mode) or on a lenient parse. Only
// canonical literal forms are accepted.
func storedForm(n Column, l literal) (string, bool) {
	if l.kind == litNegZero {
		return "", false
	}
	switch {
	case slices.Contains(intRanks, n.Type):
		return intForm(n, l)
	case n.Type == "year":
		neg, ip, frac, ok := numeric(l)
		if v, err := strconv.Atoi(ip); ok && !neg && isZeroDigits(frac) && err == nil && v >= 1901 && v <= 2155 {
			return strconv.Itoa(v), true
		}
	case n.Type == "decimal":
		return decimalForm(n, l)
	case n.Type == "float" || n.Type == "double":
		return floatForm(n, l)
	case n.Type == "date":
		if l.kind == litString && validDate(l.text) {
			return l.text, true
		}
	case n.Type == "datetime":
		return datetimeForm(n, l)
	case n.Type == "timestamp":
		// Zero is the only TIMESTAMP literal that does not depend on the
		// session's time zone.
		if s, ok := datetimeForm(n, l); ok && strings.Trim(s, "0-:. ") == "" {
			return s, true
		}
	case n.Type == "time":
		return timeForm(n, l)
	case n.Type == "char" || n.Type == "varchar" || slices.Contains(textRanks, n.Type):
		return charForm(n, l)
	case n.Type == "binary" || n.Type == "varbinary" || slices.Contains(blobRanks, n.Type):
		return bytesForm(n, l)
	case n.Type == "enum":
		return enumForm(n, l)
	case n.Type == "set":
		return setForm(n, l)
	case n.Type == "bit":
		return bitForm(n, l)
	}
	return "", false
}

// numeric returns a number's sign, integer digits and fraction digits: a
// number literal, a string holding exactly [-]digits[.digits], or an
// integral float below 2^53.
func numeric(l literal) (neg bool, ip, frac string, ok bool) {
	text := l.text
	switch l.kind {
	case litNumber:
		neg = l.neg
	case litString:
		text, neg = strings.CutPrefix(text, "-")
	case litFloat:
		if l.f != math.Trunc(l.f) || l.f >= 1<<53 {
			return false, "", "", false
		}
		neg, text = l.neg, strconv.FormatFloat(l.f, 'f', -1, 64)
	default:
		return false, "", "", false
	}
	ip, frac, _ = strings.Cut(text, ".")
	if !allDigits(ip) || (strings.Contains(text, ".") && !allDigits(frac)) {
		return false, "", "", false
	}
	ip = strings.TrimLeft(ip, "0")
	if ip == "" {
		ip = "0"
	}
	if neg && ip == "0" && isZeroDigits(frac) {
		return false, "", "", false // negative zero
	}
	return neg, ip, frac, true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isZeroDigits(s string) bool { return strings.Trim(s, "0") == "" }

// intForm stores an integer, refusing fractions (rounded) and values out of
// the column's range.
func intForm(n Column, l literal) (string, bool) {
	neg, ip, frac, ok := numeric(l)
	if !ok || !isZeroDigits(frac) {
		return "", false
	}
	mag, err := strconv.ParseUint(ip, 10, 64)
	if err != nil {
		return "", false
	}
	bits := []uint{8, 16, 24, 32, 64}[slices.Index(intRanks, n.Type)]
	switch {
	case n.Unsigned && neg:
		return "", false
	case n.Unsigned && bits < 64 && mag >= 1<<bits:
		return "", false
	case !n.Unsigned && !neg && mag >= 1<<(bits-1):
		return "", false
	case !n.Unsigned && neg && mag > 1<<(bits-1):
		return "", false
	}
	if neg {
		return "-" + ip, true
	}
	return ip, true
}

// decimalForm stores a DECIMAL with exactly Scale fraction digits, refusing
// values it would round and values out of range.
func decimalForm(n Column, l literal) (string, bool) {
	neg, ip, frac, ok := numeric(l)
	if !ok || (neg && n.Unsigned) {
		return "", false
	}
	if len(frac) > n.Scale {
		if !isZeroDigits(frac[n.Scale:]) {
			return "", false
		}
		frac = frac[:n.Scale]
	}
	if ip != "0" && len(ip) > n.Precision-n.Scale {
		return "", false
	}
	s := ip
	if n.Scale > 0 {
		s += "." + frac + strings.Repeat("0", n.Scale-len(frac))
	}
	if neg {
		s = "-" + s
	}
	return s, true
}

// floatForm stores a FLOAT (the literal's double narrowed to float32, as the
// server stores it) or DOUBLE, in the form a table file gives back.
func floatForm(n Column, l literal) (string, bool) {
	var f float64
	switch l.kind {
	case litFloat:
		f = l.f
	case litNumber, litString:
		neg, ip, frac, ok := numeric(l)
		if !ok {
			return "", false
		}
		text := ip
		if frac != "" {
			text += "." + frac
		}
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return "", false
		}
		f = v
		l.neg = neg
	default:
		return "", false
	}
	if l.neg {
		f = -f
	}
	if n.Type == "float" {
		f = float64(float32(f))
	}
	if math.IsInf(f, 0) || math.IsNaN(f) || (n.Unsigned && f < 0) {
		return "", false
	}
	return strconv.FormatFloat(f, 'g', -1, 64), true
}

// validDate reports whether s is "YYYY-MM-DD" of a real calendar day, or the
// zero date.
func validDate(s string) bool {
	if s == "0000-00-00" {
		return true
	}
	if len(s) != 10 || s[4] != '-' || s[7] != '-' || !allDigits(s[:4]) || !allDigits(s[5:7]) || !allDigits(s[8:]) {
		return false
	}
	y, _ := strconv.Atoi(s[:4])
	m, _ := strconv.Atoi(s[5:7])
	d, _ := strconv.Atoi(s[8:])
	if y < 1 || m < 1 || m > 12 || d < 1 {
		return false
	}
	days := []int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}

// clockForm checks "hh:mm:ss[.f]" (hours of at most maxHourDigits digits)
// and returns hours, "mm:ss" and the fraction padded or cut to fsp digits.
func clockForm(s string, maxHourDigits, fsp int) (h int, ms, frac string, ok bool) {
	s, f, hasFrac := strings.Cut(s, ".")
	hh, rest, _ := strings.Cut(s, ":")
	if len(hh) < 1 || len(hh) > maxHourDigits || !allDigits(hh) || len(rest) != 5 || rest[2] != ':' ||
		!allDigits(rest[:2]) || !allDigits(rest[3:]) || rest[0] > '5' || rest[3] > '5' {
		return 0, "", "", false
	}
	if hasFrac && (!allDigits(f) || len(f) > 6) {
		return 0, "", "", false
	}
	if len(f) > fsp {
		if !isZeroDigits(f[fsp:]) {
			return 0, "", "", false // the server rounds or truncates, by version and sql_mode
		}
		f = f[:fsp]
	}
	h, _ = strconv.Atoi(hh)
	if fsp > 0 {
		frac = "." + f + strings.Repeat("0", fsp-len(f))
	}
	return h, rest, frac, true
}

// datetimeForm stores "YYYY-MM-DD[ hh:mm:ss[.f]]" with exactly FSP fraction
// digits; a zero date only with a zero time.
func datetimeForm(n Column, l literal) (string, bool) {
	if l.kind != litString || len(l.text) < 10 || !validDate(l.text[:10]) {
		return "", false
	}
	date, clock := l.text[:10], "00:00:00"
	if len(l.text) > 10 {
		if l.text[10] != ' ' {
			return "", false
		}
		clock = l.text[11:]
	}
	h, ms, frac, ok := clockForm(clock, 2, n.FSP)
	if !ok || h > 23 {
		return "", false
	}
	s := date + " " + fmt.Sprintf("%02d", h) + ":" + ms + frac
	if date == "0000-00-00" && strings.Trim(s[11:], "0:.") != "" {
		return "", false
	}
	return s, true
}

// timeForm stores "[-]h:mm:ss[.f]" with at least two hour digits and
// exactly FSP fraction digits, hours below 838.
func timeForm(n Column, l literal) (string, bool) {
	if l.kind != litString {
		return "", false
	}
	s, neg := strings.CutPrefix(l.text, "-")
	h, ms, frac, ok := clockForm(s, 3, n.FSP)
	if !ok || h >= 838 || (neg && h == 0 && ms == "00:00" && strings.Trim(frac, "0.") == "") {
		return "", false
	}
	out := ""
	if neg {
		out = "-"
	}
	if h < 10 {
		out += "0"
	}
	return out + strconv.Itoa(h) + ":" + ms + frac, true
}

// charForm stores character data: ASCII only (other characters depend on
// the statement's connection charset), within the column's length; CHAR
// loses trailing spaces, as SELECT prints it.
func charForm(n Column, l literal) (string, bool) {
	s := l.text
	switch l.kind {
	case litString:
	case litNumber:
		neg, ip, frac, ok := numeric(l)
		if !ok || frac != "" {
			return "", false
		}
		s = ip
		if neg {
			s = "-" + ip
		}
	default:
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return "", false
		}
	}
	if n.Type == "char" {
		s = strings.TrimRight(s, " ")
	}
	if !fits(n, len(s)) {
		return "", false
	}
	return s, true
}

// bytesForm stores binary data given as a string or a bit or hex literal;
// BINARY(n) is padded with 0x00 to n bytes.
func bytesForm(n Column, l literal) (string, bool) {
	if l.kind != litString && l.kind != litBits {
		return "", false
	}
	if !fits(n, len(l.text)) {
		return "", false
	}
	if n.Type == "binary" {
		return l.text + strings.Repeat("\x00", n.Length-len(l.text)), true
	}
	return l.text, true
}

// fits reports whether a value of size characters (ASCII) or bytes fits the
// string column n.
func fits(n Column, size int) bool {
	switch n.Type {
	case "char", "varchar", "binary", "varbinary":
		return size <= n.Length
	}
	return int64(size) <= blobCapacity(n.Type)
}

// enumForm stores an ENUM default given as a label, exactly (MariaDB
// refuses an index as an ENUM default).
func enumForm(n Column, l literal) (string, bool) {
	if l.kind == litString && slices.Contains(n.Elems, l.text) {
		return l.text, true
	}
	return "", false
}

// setForm stores a SET default given as labels joined by "," (each exactly
// a label; MariaDB refuses a bit mask as a SET default): the labels in
// declaration order.
func setForm(n Column, l literal) (string, bool) {
	if l.kind != litString {
		return "", false
	}
	var mask uint64
	if l.text != "" {
		for _, part := range strings.Split(l.text, ",") {
			i := slices.Index(n.Elems, part)
			if i < 0 {
				return "", false
			}
			mask |= 1 << uint(i)
		}
	}
	var labels []string
	for i, e := range n.Elems {
		if mask&(1<<uint(i)) != 0 {
			labels = append(labels, e)
		}
	}
	return strings.Join(labels, ","), true
}

// bitForm stores BIT(n) as its ceil(n/8) big-endian bytes.
func bitForm(n Column, l literal) (string, bool) {
	var v uint64
	switch l.kind {
	case litBits:
		b := strings.TrimLeft(l.text, "\x00")
		if len(b) > 8 {
			return "", false
		}
		for i := 0; i < len(b); i++ {
			v = v<<8 | uint64(b[i])
		}
	default:
		neg, ip, frac, ok := numeric(l)
		u, err := strconv.ParseUint(ip, 10, 64)
		if !ok || neg || frac != "" || err != nil || l.kind == litString {
			return "", false
		}
		v = u
	}
	if n.Length < 1 || n.Length > 64 || (n.Length < 64 && v>>uint(n.Length) != 0) {
		return "", false
	}
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], v)
	return string(buf[8-(n.Length+7)/8:]), true
}
