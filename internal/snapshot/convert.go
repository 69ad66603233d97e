package snapshot

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// column is one column of a TableWriter: its classification and the Arrow
// buffers of the row group being built (validity bitmap, fixed-width values
// or offsets and data). The buffers are reused from one row group to the
// next: pqarrow copies what it keeps (dictionary, statistics) before Write
// returns.
type column struct {
	col   *schema.Column
	dt    arrow.DataType
	pass  onePass // how appendSQL decodes a value
	bits  uint    // onePassInt: the integer's width (rowimage.ClassOf)
	width int     // bytes per value of a fixed-width type; 0 for STRING/BINARY
	n     int
	nulls int
	valid []byte  // validity bitmap, LSB first
	fixed []byte  // fixed-width values, native endian as Arrow lays them out
	offs  []int32 // STRING/BINARY: len n+1
	data  []byte  // STRING/BINARY: the bytes
}

func newColumns(t *schema.Table, sc *arrow.Schema) []column {
	cols := make([]column, len(t.Columns))
	for i := range t.Columns {
		dt := sc.Field(i).Type
		width := 0
		if fw, ok := dt.(arrow.FixedWidthDataType); ok {
			width = fw.BitWidth() / 8
		}
		cols[i] = column{col: &t.Columns[i], dt: dt, width: width, offs: []int32{0}}
		switch class, bits := rowimage.ClassOf(&t.Columns[i]); class {
		case rowimage.ClassInteger:
			cols[i].pass, cols[i].bits = onePassInt, bits
		case rowimage.ClassFloat, rowimage.ClassDouble:
			cols[i].pass = onePassFloat
		}
	}
	return cols
}

// onePass is how a column decodes a value while canonicalising it: numbers
// in the same pass (their canonical text is the number's shortest text,
// parsing it again would only cost time), the rest by parsing the
// canonical form.
type onePass uint8

const (
	parseCanonical onePass = iota
	onePassInt             // rowimage.AppendSQLInt
	onePassFloat           // rowimage.AppendSQLFloat
)

// appendSQL appends the canonical form of v, a non-NULL value in the SQL
// text form (rowimage.AppendSQLValue), to canon and decodes the value into
// out; decoded bytes that differ from the canonical text go to *scratch.
// On error canon is returned as given and out is not to be used.
func (c *column) appendSQL(canon []byte, v rowimage.Cell, scratch *[]byte, out *value) ([]byte, error) {
	var err error
	switch c.pass {
	case onePassInt:
		var mag uint64
		var neg bool
		canon, mag, neg, err = rowimage.AppendSQLInt(canon, c.col, c.bits, v.Text)
		*out = value{}
		switch {
		case c.col.Unsigned:
			out.u = mag
		case neg:
			out.i = -int64(mag-1) - 1 // mag ≤ 1<<63, checked by AppendSQLInt
		default:
			out.i = int64(mag)
		}
		return canon, err
	case onePassFloat:
		*out = value{}
		canon, out.f, err = rowimage.AppendSQLFloat(canon, c.col, v.Text)
		return canon, err
	}
	at := len(canon)
	if canon, err = rowimage.AppendSQLValue(canon, c.col, v); err != nil {
		return canon, err
	}
	return canon, c.parse(canon[at:], at, scratch, out)
}

// newArray returns the values of the row group as an Arrow array aliasing
// the column's buffers; reset must not be called before the array is done
// with.
func (c *column) newArray() arrow.Array {
	var validity *memory.Buffer
	if c.nulls > 0 {
		validity = memory.NewBufferBytes(c.valid)
	}
	bufs := []*memory.Buffer{validity, memory.NewBufferBytes(c.fixed)}
	if c.width == 0 {
		bufs = []*memory.Buffer{validity, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(c.offs)), memory.NewBufferBytes(c.data)}
	}
	data := array.NewData(c.dt, c.n, bufs, nil, c.nulls, 0)
	defer data.Release()
	return array.MakeFromData(data)
}

// reset empties the buffers, keeping their capacity.
func (c *column) reset() {
	c.n, c.nulls = 0, 0
	c.valid, c.fixed, c.offs, c.data = c.valid[:0], c.fixed[:0], c.offs[:1], c.data[:0]
}

// value is one column's value of the row being appended, parsed from its
// canonical form before anything is appended to the buffers, so that a bad
// value never leaves a half-appended row.
type value struct {
	null   bool
	i      int64
	u      uint64
	f      float64
	lo, hi int  // bytes: canon[lo:hi] or scratch[lo:hi]
	inScr  bool // bytes live in scratch
}

var errCanonical = errors.New("canonical value does not parse") // a bug, never data

// bstr views b as a string without copying, for parsers that do not keep it.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// parse decodes canonical value text v (v = canon[lo:lo+len(v)]) into out;
// decoded bytes that differ from the text go to *scratch.
func (c *column) parse(v []byte, lo int, scratch *[]byte, out *value) error {
	*out = value{}
	var err error
	switch c.dt.ID() {
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

// put appends a parsed value to the column's buffers. It cannot fail.
func (c *column) put(v *value, canon, scratch []byte) {
	if c.n&7 == 0 {
		c.valid = append(c.valid, 0)
	}
	if v.null {
		c.nulls++
		if c.width > 0 {
			c.fixed = append(c.fixed, zeros[:c.width]...)
		} else {
			c.offs = append(c.offs, int32(len(c.data)))
		}
		c.n++
		return
	}
	c.valid[c.n>>3] |= 1 << (c.n & 7)
	c.n++
	ne := binary.NativeEndian
	switch c.dt.ID() {
	case arrow.INT8:
		c.fixed = append(c.fixed, byte(v.i))
	case arrow.UINT8:
		c.fixed = append(c.fixed, byte(v.u))
	case arrow.INT16:
		c.fixed = ne.AppendUint16(c.fixed, uint16(v.i))
	case arrow.UINT16:
		c.fixed = ne.AppendUint16(c.fixed, uint16(v.u))
	case arrow.INT32:
		c.fixed = ne.AppendUint32(c.fixed, uint32(v.i))
	case arrow.UINT32:
		c.fixed = ne.AppendUint32(c.fixed, uint32(v.u))
	case arrow.INT64:
		c.fixed = ne.AppendUint64(c.fixed, uint64(v.i))
	case arrow.UINT64:
		c.fixed = ne.AppendUint64(c.fixed, v.u)
	case arrow.FLOAT32:
		c.fixed = ne.AppendUint32(c.fixed, math.Float32bits(float32(v.f)))
	case arrow.FLOAT64:
		c.fixed = ne.AppendUint64(c.fixed, math.Float64bits(v.f))
	default: // STRING, BINARY
		c.data = append(c.data, v.bytes(canon, scratch)...)
		c.offs = append(c.offs, int32(len(c.data)))
	}
}

var zeros [8]byte

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
