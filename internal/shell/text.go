package shell

import (
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// text renders a non-NULL value of DuckDB type typ as DuckDB prints it:
// DECIMAL with all its scale digits, TIMESTAMP "2006-01-02 15:04:05" with
// the fraction's significant digits, INTERVAL of hours as [-]HH:MM:SS[.f]
// (MySQL's TIME text), BLOB with \xHH escapes.
func text(v any, typ string) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		if typ == "UUID" && len(x) == 16 {
			var u duckdb.UUID
			copy(u[:], x)
			return u.String()
		}
		return blobText(x)
	case bool:
		return strconv.FormatBool(x)
	case float32:
		return floatText(float64(x), 32)
	case float64:
		return floatText(x, 64)
	case duckdb.Decimal:
		return decimalText(x)
	case duckdb.Interval:
		return intervalText(x)
	case duckdb.UUID:
		return x.String()
	case *big.Int:
		return x.String()
	case time.Time:
		return timeText(x, typ)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = nestedText(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = "'" + k + "': " + nestedText(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case duckdb.OrderedMap:
		keys, values := x.Keys(), x.Values()
		parts := make([]string, len(keys))
		for i := range keys {
			parts[i] = nestedText(keys[i]) + "=" + nestedText(values[i])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// nestedText renders an element of a list or struct.
func nestedText(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	}
	return text(v, "")
}

func floatText(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', -1, bits)
}

// decimalText renders d with exactly its scale digits ("49.80", "-0.05").
func decimalText(d duckdb.Decimal) string {
	if d.Value == nil {
		return "0"
	}
	digits := new(big.Int).Abs(d.Value).String()
	sign := ""
	if d.Value.Sign() < 0 {
		sign = "-"
	}
	scale := int(d.Scale)
	if scale == 0 {
		return sign + digits
	}
	if len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	cut := len(digits) - scale
	return sign + digits[:cut] + "." + digits[cut:]
}

// intervalText renders an interval: "[-]HH:MM:SS[.ffffff]" when it has only
// a time part, otherwise "N years N months N days" before it as DuckDB does.
func intervalText(iv duckdb.Interval) string {
	var parts []string
	unit := func(n int64, name string) {
		if n != 0 {
			s := strconv.FormatInt(n, 10) + " " + name
			if n != 1 && n != -1 {
				s += "s"
			}
			parts = append(parts, s)
		}
	}
	unit(int64(iv.Months/12), "year")
	unit(int64(iv.Months%12), "month")
	unit(int64(iv.Days), "day")
	if iv.Micros != 0 || len(parts) == 0 {
		parts = append(parts, clockText(iv.Micros))
	}
	return strings.Join(parts, " ")
}

// clockText renders microseconds as [-]HH:MM:SS[.ffffff] (hours may exceed
// 24; six fraction digits when there is a fraction).
func clockText(us int64) string {
	sign := ""
	u := uint64(us)
	if us < 0 {
		sign, u = "-", uint64(-us)
	}
	sec := u / 1e6
	s := fmt.Sprintf("%s%02d:%02d:%02d", sign, sec/3600, sec/60%60, sec%60)
	if frac := u % 1e6; frac != 0 {
		s += fmt.Sprintf(".%06d", frac)
	}
	return s
}

// timeText renders a DATE, TIME, TIMESTAMP or TIMESTAMPTZ value; the session
// time zone is UTC.
func timeText(t time.Time, typ string) string {
	t = t.UTC()
	frac := func(s string) string {
		if ns := t.Nanosecond(); ns != 0 {
			f := strings.TrimRight(fmt.Sprintf("%09d", ns), "0")
			if typ != "TIMESTAMP_NS" && len(f) > 6 {
				f = f[:6]
			}
			s += "." + f
		}
		return s
	}
	switch {
	case typ == "DATE":
		return t.Format("2006-01-02")
	case strings.HasPrefix(typ, "TIME") && !strings.HasPrefix(typ, "TIMESTAMP"):
		return frac(t.Format("15:04:05"))
	case typ == "TIMESTAMPTZ" || strings.Contains(typ, "TIME ZONE"):
		return frac(t.Format("2006-01-02 15:04:05")) + "+00"
	}
	return frac(t.Format("2006-01-02 15:04:05"))
}

// blobText renders bytes as DuckDB prints a BLOB: printable ASCII as is,
// everything else (and the backslash) as \xHH.
func blobText(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		if c >= 0x20 && c < 0x7f && c != '\\' {
			s.WriteByte(c)
		} else {
			fmt.Fprintf(&s, `\x%02X`, c)
		}
	}
	return s.String()
}
