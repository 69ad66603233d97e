package shell

import (
	"bytes"
	"cmp"
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

	duckdb "github.com/duckdb/duckdb-go/v2"
)

// Output formats of `dbtrail query`.
const (
	FormatTable = "table"
	FormatCSV   = "csv"
	FormatJSON  = "json"
)

// CheckFormat refuses an unknown output format.
func CheckFormat(f string) error {
	switch f {
	case FormatTable, FormatCSV, FormatJSON:
		return nil
	}
	return fmt.Errorf("--format %q: want table, csv or json", f)
}

// result is one statement's rows as the formats read them.
type Result struct {
	rows  *sql.Rows
	Cols  []string
	Types []string // DuckDB type names, e.g. "DECIMAL(12,2)", "TIMESTAMP"
}

// NewResult reads the columns of rows.
func NewResult(rows *sql.Rows) (*Result, error) {
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	r := &Result{rows: rows}
	for _, ct := range cts {
		r.Cols = append(r.Cols, ct.Name())
		r.Types = append(r.Types, ct.DatabaseTypeName())
	}
	return r, nil
}

// next scans the next row into vals (len(r.Cols)); false at the end.
func (r *Result) Next(vals []any) (bool, error) {
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
func writeResult(w io.Writer, f string, r *Result) (int, error) {
	switch f {
	case FormatCSV:
		return writeCSV(w, r)
	case FormatJSON:
		return writeJSON(w, r)
	}
	return writeTable(w, r)
}

// writeCSV writes a header line and one line per row (RFC 4180); NULL is
// an empty field.
func writeCSV(w io.Writer, r *Result) (int, error) {
	cw := csv.NewWriter(w)
	if err := cw.Write(r.Cols); err != nil {
		return 0, err
	}
	vals := make([]any, len(r.Cols))
	rec := make([]string, len(r.Cols))
	n := 0
	for {
		ok, err := r.Next(vals)
		if err != nil || !ok {
			cw.Flush()
			return n, cmp.Or(err, cw.Error())
		}
		for i, v := range vals {
			rec[i] = ""
			if v != nil {
				rec[i] = text(v, r.Types[i])
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
func writeJSON(w io.Writer, r *Result) (int, error) {
	keys := make([][]byte, len(r.Cols))
	for i, c := range r.Cols {
		keys[i] = appendJSONString(nil, c)
	}
	vals := make([]any, len(r.Cols))
	var b []byte
	n := 0
	for {
		ok, err := r.Next(vals)
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
			b = AppendJSON(b, v, r.Types[i])
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

// AppendJSON appends the JSON of one value of DuckDB type typ.
func AppendJSON(b []byte, v any, typ string) []byte {
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
			b = AppendJSON(b, e, "")
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
			b = AppendJSON(b, x[k], "")
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
