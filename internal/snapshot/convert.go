package snapshot

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/types"
)

// column is one column of a TableWriter: its classification and its builder.
type column struct {
	col   *schema.Column
	class types.Class
	dt    arrow.Type
	b     array.Builder
}

// newArray returns the values appended so far and resets the builder,
// reserving room for as many rows and bytes as this array holds: row groups
// tend to be alike, and growing a builder by doubling costs copies.
func (c *column) newArray(rows int) arrow.Array {
	data := 0
	if b, ok := c.b.(interface{ DataLen() int }); ok {
		data = b.DataLen()
	}
	a := c.b.NewArray()
	c.b.Reserve(rows)
	if b, ok := c.b.(interface{ ReserveData(int) }); ok {
		b.ReserveData(data)
	}
	return a
}

// value is one column's value of the row being appended, parsed from its
// canonical form before anything is given to the builders, so that a bad
// value never leaves a half-appended row.
type value struct {
	null   bool
	i      int64
	u      uint64
	f      float64
	lo, hi int  // bytes: canon[lo:hi] or scratch[lo:hi]
	inScr  bool // bytes live in scratch
}

func newColumns(mem memory.Allocator, t *schema.Table, sc *arrow.Schema) []column {
	cols := make([]column, len(t.Columns))
	for i := range t.Columns {
		c := &t.Columns[i]
		class, _ := types.ClassOf(c)
		dt := sc.Field(i).Type
		cols[i] = column{col: c, class: class, dt: dt.ID(), b: array.NewBuilder(mem, dt)}
	}
	return cols
}

var errCanonical = errors.New("canonical value does not parse") // a bug, never data

// bstr views b as a string without copying, for parsers that do not keep it.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// parse decodes canonical value text v (v = canon[lo:lo+len(v)]) into out;
// decoded bytes that differ from the text go to *scratch.
func (c *column) parse(v []byte, lo int, scratch *[]byte, out *value) error {
	*out = value{}
	var err error
	switch c.dt {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		out.i, err = strconv.ParseInt(bstr(v), 10, 64)
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		out.u, err = strconv.ParseUint(bstr(v), 10, 64)
	case arrow.FLOAT32:
		out.f, err = strconv.ParseFloat(bstr(v), 32)
	case arrow.FLOAT64:
		out.f, err = strconv.ParseFloat(bstr(v), 64)
	case arrow.STRING:
		if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
			return errCanonical
		}
		body := v[1 : len(v)-1]
		if bytes.IndexByte(body, '\\') < 0 {
			out.lo, out.hi = lo+1, lo+len(v)-1
			return nil
		}
		n := len(*scratch)
		if *scratch, err = unescapeJSON(*scratch, body); err != nil {
			return err
		}
		out.lo, out.hi, out.inScr = n, len(*scratch), true
	case arrow.BINARY:
		if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
			return errCanonical
		}
		n := len(*scratch)
		if *scratch, err = base64.StdEncoding.AppendDecode(*scratch, v[1:len(v)-1]); err != nil {
			return err
		}
		out.lo, out.hi, out.inScr = n, len(*scratch), true
	default:
		return errCanonical
	}
	return err
}

// put appends a parsed value to the builder. It cannot fail.
func (c *column) put(v *value, canon, scratch []byte) {
	if v.null {
		c.b.AppendNull()
		return
	}
	switch b := c.b.(type) {
	case *array.Int8Builder:
		b.Append(int8(v.i))
	case *array.Int16Builder:
		b.Append(int16(v.i))
	case *array.Int32Builder:
		b.Append(int32(v.i))
	case *array.Int64Builder:
		b.Append(v.i)
	case *array.Uint8Builder:
		b.Append(uint8(v.u))
	case *array.Uint16Builder:
		b.Append(uint16(v.u))
	case *array.Uint32Builder:
		b.Append(uint32(v.u))
	case *array.Uint64Builder:
		b.Append(v.u)
	case *array.Float32Builder:
		b.Append(float32(v.f))
	case *array.Float64Builder:
		b.Append(v.f)
	case *array.StringBuilder:
		b.BinaryBuilder.Append(v.bytes(canon, scratch))
	case *array.BinaryBuilder:
		b.Append(v.bytes(canon, scratch))
	}
}

func (v *value) bytes(canon, scratch []byte) []byte {
	if v.inScr {
		return scratch[v.lo:v.hi]
	}
	return canon[v.lo:v.hi]
}

// unescapeJSON appends the text of a JSON string body (without quotes).
func unescapeJSON(dst, s []byte) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch != '\\' {
			dst = append(dst, ch)
			continue
		}
		if i+1 >= len(s) {
			return dst, errCanonical
		}
		i++
		switch s[i] {
		case '"', '\\', '/':
			dst = append(dst, s[i])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s, i+1)
			if !ok {
				return dst, errCanonical
			}
			i += 4
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
					r2, ok = hex4(s, i+3)
				}
				if r = utf16.DecodeRune(r, r2); !ok || r == utf8.RuneError {
					return dst, fmt.Errorf("unpaired surrogate in JSON string")
				}
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, errCanonical
		}
	}
	return dst, nil
}

func hex4(s []byte, at int) (rune, bool) {
	if at+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, h := range s[at : at+4] {
		var d byte
		switch {
		case h >= '0' && h <= '9':
			d = h - '0'
		case h >= 'a' && h <= 'f':
			d = h - 'a' + 10
		case h >= 'A' && h <= 'F':
			d = h - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

// appendSQLText appends the SQL text form of row i of arr (a column of a table
// file) to dst: decimal digits for integers, the exact double text for
// FLOAT/DOUBLE (what CAST(col AS DOUBLE) prints), the bytes for strings and
// binary. It reports false for NULL.
func appendSQLText(dst []byte, arr arrow.Array, i int) ([]byte, bool, error) {
	if arr.IsNull(i) {
		return dst, false, nil
	}
	switch a := arr.(type) {
	case *array.Int8:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), true, nil
	case *array.Int16:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), true, nil
	case *array.Int32:
		return strconv.AppendInt(dst, int64(a.Value(i)), 10), true, nil
	case *array.Int64:
		return strconv.AppendInt(dst, a.Value(i), 10), true, nil
	case *array.Uint8:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10), true, nil
	case *array.Uint16:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10), true, nil
	case *array.Uint32:
		return strconv.AppendUint(dst, uint64(a.Value(i)), 10), true, nil
	case *array.Uint64:
		return strconv.AppendUint(dst, a.Value(i), 10), true, nil
	case *array.Float32:
		return strconv.AppendFloat(dst, float64(a.Value(i)), 'g', -1, 64), true, nil
	case *array.Float64:
		return strconv.AppendFloat(dst, a.Value(i), 'g', -1, 64), true, nil
	case *array.String:
		return append(dst, a.Value(i)...), true, nil
	case *array.Binary:
		return append(dst, a.Value(i)...), true, nil
	}
	return dst, false, fmt.Errorf("unexpected Arrow type %s", arr.DataType())
}
