package main

import (
	"bytes"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Output formats of `dbtrail query`.
const (
	formatTable = "table"
	formatCSV   = "csv"
	formatJSON  = "json"
)

// checkFormat refuses an unknown output format.
func checkFormat(f string) error {
	switch f {
	case formatTable, formatCSV, formatJSON:
		return nil
	}
	return fmt.Errorf("--format %q: want table, csv or json", f)
}

// result is one statement's rows as the formats read them.
type result struct {
	rows  *sql.Rows
	cols  []string
	types []string // DuckDB type names, e.g. "DECIMAL(12,2)", "TIMESTAMP"
}

// newResult reads the columns of rows.
func newResult(rows *sql.Rows) (*result, error) {
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	r := &result{rows: rows}
	for _, ct := range cts {
		r.cols = append(r.cols, ct.Name())
		r.types = append(r.types, ct.DatabaseTypeName())
	}
	return r, nil
}

// next scans the next row into vals (len(r.cols)); false at the end.
func (r *result) next(vals []any) (bool, error) {
	if !r.rows.Next() {
		return false, r.rows.Err()
	}
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	return true, r.rows.Scan(ptrs...)
}

// writeResult writes the rows of r in format f and returns how many there
// were. table buffers the rows to align them; csv and json stream.
func writeResult(w io.Writer, f string, r *result) (int, error) {
	switch f {
	case formatCSV:
		return writeCSV(w, r)
	case formatJSON:
		return writeJSON(w, r)
	}
	return writeTable(w, r)
}

// writeCSV writes a header line and one line per row (RFC 4180); NULL is
// an empty field.
func writeCSV(w io.Writer, r *result) (int, error) {
	cw := csv.NewWriter(w)
	if err := cw.Write(r.cols); err != nil {
		return 0, err
	}
	vals := make([]any, len(r.cols))
	rec := make([]string, len(r.cols))
	n := 0
	for {
		ok, err := r.next(vals)
		if err != nil || !ok {
			cw.Flush()
			return n, cmpErr(err, cw.Error())
		}
		for i, v := range vals {
			rec[i] = ""
			if v != nil {
				rec[i] = text(v, r.types[i])
			}
		}
		if err := cw.Write(rec); err != nil {
			return n, err
		}
		n++
	}
}

// writeJSON writes a JSON array with one object per row, one row per line,
// keys in column order. Numbers (DECIMAL exactly) are JSON numbers, NULL is
// null, lists and structs are arrays and objects, everything else is the
// text the table format shows.
func writeJSON(w io.Writer, r *result) (int, error) {
	keys := make([][]byte, len(r.cols))
	for i, c := range r.cols {
		keys[i] = appendJSONString(nil, c)
	}
	vals := make([]any, len(r.cols))
	var b []byte
	n := 0
	for {
		ok, err := r.next(vals)
		if err != nil {
			return n, err
		}
		if !ok {
			break
		}
		b = b[:0]
		if n == 0 {
			b = append(b, "[\n"...)
		} else {
			b = append(b, ",\n"...)
		}
		b = append(b, '{')
		for i, v := range vals {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, keys[i]...)
			b = append(b, ':')
			b = appendJSON(b, v, r.types[i])
		}
		b = append(b, '}')
		if _, err := w.Write(b); err != nil {
			return n, err
		}
		n++
	}
	end := "\n]\n"
	if n == 0 {
		end = "[]\n"
	}
	_, err := io.WriteString(w, end)
	return n, err
}

// appendJSON appends the JSON of one value of DuckDB type typ.
func appendJSON(b []byte, v any, typ string) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint, *big.Int, duckdb.Decimal:
		return append(b, text(v, typ)...)
	case float32:
		return appendJSONFloat(b, float64(x), 32)
	case float64:
		return appendJSONFloat(b, x, 64)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, e, "")
		}
		return append(b, ']')
	case map[string]any:
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSON(b, x[k], "")
		}
		return append(b, '}')
	}
	return appendJSONString(b, text(v, typ))
}

// appendJSONString appends s as a JSON string, without escaping <, > and &
// as HTML would need.
func appendJSONString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// appendJSONFloat appends a finite float as a number, NaN and ±Inf as the
// strings DuckDB prints.
func appendJSONFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return appendJSONString(b, text(f, ""))
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}

// cmpErr returns the first non-nil error.
func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

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
