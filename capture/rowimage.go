package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// Row images of the common column types are decoded straight from the
// rows event's bytes into the index's stored form: go-mysql's decoding
// builds a []any per row image and boxes every value (an allocation per
// column), which made it and the garbage collector most of capture's CPU on
// wide rows. Each value is decoded into the Go value go-mysql would give
// (ParseTime=false, UseDecimal=false, no signedness metadata), as text or
// integer without boxing, and encoded by the same types functions, so the
// images are byte for byte those of the go-mysql path (proven by
// TestDirectRowsMatchGoMySQL; TIMESTAMP in UTC, capture's
// TimestampStringLocation). A rows event with a column type outside
// directType, a partial image, compression or partial JSON goes through
// go-mysql as before.

// directEvent reports whether re's rows decode directly: a plain write,
// update or delete rows event of full images whose table map holds only
// directType columns.
func directEvent(h *replication.EventHeader, re *replication.RowsEvent) bool {
	if h == nil {
		return false
	}
	switch h.EventType {
	case replication.WRITE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv1,
		replication.WRITE_ROWS_EVENTv2, replication.UPDATE_ROWS_EVENTv2, replication.DELETE_ROWS_EVENTv2:
	default:
		return false
	}
	tm := re.Table
	if tm == nil || len(tm.ColumnType) != int(re.ColumnCount) || len(tm.ColumnMeta) != int(re.ColumnCount) {
		return false
	}
	if !fullBitmap(re.ColumnBitmap1, int(re.ColumnCount)) {
		return false
	}
	if re.Type() == replication.EnumRowsEventTypeUpdate && !fullBitmap(re.ColumnBitmap2, int(re.ColumnCount)) {
		return false
	}
	for i, tp := range tm.ColumnType {
		if _, _, ok := directType(tp, tm.ColumnMeta[i]); !ok {
			return false
		}
	}
	return true
}

// fullBitmap reports whether the first n bits of b are all set.
func fullBitmap(b []byte, n int) bool {
	if len(b) < (n+7)/8 {
		return false
	}
	ones := 0
	for i := 0; i < n/8; i++ {
		ones += bits.OnesCount8(b[i])
	}
	if r := n % 8; r > 0 {
		ones += bits.OnesCount8(b[n/8] & byte(1<<r-1))
	}
	return ones == n
}

// directType resolves a table map's column type as go-mysql does (a
// STRING's meta may hold the real type, ENUM or SET, and its length) and
// reports whether it is one decodeValue takes.
func directType(tp byte, meta uint16) (real byte, length int, ok bool) {
	real = tp
	if tp == mysql.MYSQL_TYPE_STRING {
		if meta >= 256 {
			b0, b1 := uint8(meta>>8), uint8(meta&0xFF)
			if b0&0x30 != 0x30 {
				length = int(uint16(b1) | uint16((b0&0x30)^0x30)<<4)
				real = b0 | 0x30
			} else {
				length = int(meta & 0xFF)
				real = b0
			}
		} else {
			length = int(meta)
		}
	}
	switch real {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG,
		mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_FLOAT, mysql.MYSQL_TYPE_DOUBLE, mysql.MYSQL_TYPE_NEWDECIMAL,
		mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_YEAR, mysql.MYSQL_TYPE_STRING:
		return real, length, true
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		return real, int(meta), true
	case mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_TIMESTAMP2, mysql.MYSQL_TYPE_TIME2:
		return real, 0, meta <= 6
	case mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIME:
		return real, 0, true
	case mysql.MYSQL_TYPE_BIT:
		return real, 0, bitCount(meta) >= 1 && bitCount(meta) <= 64
	case mysql.MYSQL_TYPE_BLOB:
		return real, 0, meta >= 1 && meta <= 4
	case mysql.MYSQL_TYPE_ENUM:
		return real, 0, meta&0xFF == 1 || meta&0xFF == 2
	case mysql.MYSQL_TYPE_SET:
		return real, 0, meta&0xFF >= 1 && meta&0xFF <= 8
	}
	return real, 0, false
}

// errShortImage is a row image that ends inside a value.
var errShortImage = errors.New("row image ends inside a value")

// rowImage is one decoded row image in stored form: text is the JSON array
// of values; values[j] is where column j's value text is in it, raw[j]
// where its bytes are in data, the rows event's (from < 0 for NULL), for
// comparing an update's images. Offsets rather than slices: the image is
// rewritten for every row, and slices would cost a write barrier each.
type rowImage struct {
	text   []byte
	values []span
	data   []byte
	raw    []span
	tmp    []byte // decodeValue's scratch
}

// span is a range [from, to) of a byte slice.
type span struct{ from, to int }

// value is column j's value text.
func (img *rowImage) value(j int) []byte { return img.text[img.values[j].from:img.values[j].to] }

// rawValue is column j's bytes in the binlog, nil for NULL.
func (img *rowImage) rawValue(j int) []byte {
	if r := img.raw[j]; r.from >= 0 {
		return img.data[r.from:r.to]
	}
	return nil
}

// decodeImage decodes the row image at data[pos:] for table t (whose
// columns are the event's, in order) into img, and returns the bytes it
// took. tm is the event's table map.
func decodeImage(img *rowImage, t *schema.Table, tm *replication.TableMapEvent, data []byte, pos int) (int, error) {
	n := len(t.Columns)
	start := pos
	nullBytes := (n + 7) / 8
	if len(data)-pos < nullBytes {
		return 0, errShortImage
	}
	nulls := data[pos : pos+nullBytes]
	pos += nullBytes
	img.text = append(img.text[:0], '[')
	img.data = data
	img.values, img.raw = img.values[:0], img.raw[:0]
	for j := 0; j < n; j++ {
		if j > 0 {
			img.text = append(img.text, ',')
		}
		from := len(img.text)
		if nulls[j>>3]&(1<<(uint(j)&7)) != 0 {
			img.text = append(img.text, "null"...)
			img.values = append(img.values, span{from, len(img.text)})
			img.raw = append(img.raw, span{-1, -1})
			continue
		}
		out, size, err := decodeValue(img.text, &img.tmp, &t.Columns[j], tm.ColumnType[j], tm.ColumnMeta[j], data[pos:])
		if err != nil {
			if errors.Is(err, errShortImage) {
				return 0, fmt.Errorf("table %s column %s: %w", t.QualifiedName(), t.Columns[j].Name, err)
			}
			var ve *rowimage.ValueError
			if errors.As(err, &ve) {
				cp := *ve
				cp.Table = t.QualifiedName()
				return 0, &cp
			}
			return 0, fmt.Errorf("table %s: %w", t.QualifiedName(), err)
		}
		img.text = out
		img.values = append(img.values, span{from, len(img.text)})
		img.raw = append(img.raw, span{pos, pos + size})
		pos += size
	}
	img.text = append(img.text, ']')
	return pos - start, nil
}

// decodeValue decodes one non-NULL value of binlog type tp (meta as the
// table map gives it) at data's start for column c, appends its stored
// form to dst and returns the bytes it took. tmp is scratch for the text
// of a DECIMAL or a temporal value.
func decodeValue(dst []byte, tmp *[]byte, c *schema.Column, tp byte, meta uint16, data []byte) ([]byte, int, error) {
	real, length, _ := directType(tp, meta)
	need := func(n int) error {
		if n > len(data) || n < 0 {
			return errShortImage
		}
		return nil
	}
	var n int
	switch real {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONGLONG:
		n = intWidth(real)
		if err := need(n); err != nil {
			return dst, 0, err
		}
		out, err := rowimage.AppendIntValue(dst, c, signedLE(data[:n]))
		return out, n, err
	case mysql.MYSQL_TYPE_YEAR:
		if err := need(1); err != nil {
			return dst, 0, err
		}
		year := int64(data[0])
		if year != 0 {
			year += 1900
		}
		out, err := rowimage.AppendIntValue(dst, c, year)
		return out, 1, err
	case mysql.MYSQL_TYPE_FLOAT:
		if err := need(4); err != nil {
			return dst, 0, err
		}
		out, err := rowimage.AppendFloatValue(dst, c, float64(math.Float32frombits(binary.LittleEndian.Uint32(data))), true)
		return out, 4, err
	case mysql.MYSQL_TYPE_DOUBLE:
		if err := need(8); err != nil {
			return dst, 0, err
		}
		out, err := rowimage.AppendFloatValue(dst, c, math.Float64frombits(binary.LittleEndian.Uint64(data)), false)
		return out, 8, err
	case mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET:
		n = int(meta & 0xFF)
		if err := need(n); err != nil {
			return dst, 0, err
		}
		out, err := rowimage.AppendIntValue(dst, c, int64(unsignedLE(data[:n])))
		return out, n, err
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		text, n, err := decimalText((*tmp)[:0], data, int(meta>>8), int(meta&0xFF))
		if err != nil {
			return dst, 0, err
		}
		*tmp = text
		out, err := rowimage.AppendTextValue(dst, c, text, true)
		return out, n, err
	case mysql.MYSQL_TYPE_DATE:
		return appendFixedText(dst, tmp, c, data, 3, func(d, b []byte) []byte { return dateText(d, uint32(unsignedLE(b))) })
	case mysql.MYSQL_TYPE_DATETIME2:
		return appendFixedText(dst, tmp, c, data, 5+fracBytes(int(meta)), func(d, b []byte) []byte { return datetime2Text(d, b, int(meta)) })
	case mysql.MYSQL_TYPE_TIMESTAMP2:
		return appendFixedText(dst, tmp, c, data, 4+fracBytes(int(meta)), func(d, b []byte) []byte { return timestamp2Text(d, b, int(meta)) })
	case mysql.MYSQL_TYPE_TIMESTAMP:
		return appendFixedText(dst, tmp, c, data, 4, timestampText)
	case mysql.MYSQL_TYPE_TIME2:
		return appendFixedText(dst, tmp, c, data, 3+fracBytes(int(meta)), func(d, b []byte) []byte { return time2Text(d, b, int(meta)) })
	case mysql.MYSQL_TYPE_TIME:
		return appendFixedText(dst, tmp, c, data, 3, func(d, b []byte) []byte { return timeText(d, uint32(unsignedLE(b))) })
	case mysql.MYSQL_TYPE_BIT: // go-mysql gives the big-endian bits as an int64 (BIT(64) all ones as -1)
		n = (bitCount(meta) + 7) / 8
		if err := need(n); err != nil {
			return dst, 0, err
		}
		out, err := rowimage.AppendIntValue(dst, c, int64(bigEndian(data[:n])))
		return out, n, err
	case mysql.MYSQL_TYPE_BLOB: // go-mysql gives a []byte
		return appendPrefixed(dst, c, data, int(meta), false)
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_STRING: // a string
		if length >= 256 {
			return appendPrefixed(dst, c, data, 2, true)
		}
		return appendPrefixed(dst, c, data, 1, true)
	}
	return dst, 0, fmt.Errorf("column %s: binlog type %d is not decoded directly", c.Name, tp)
}

// appendFixedText appends the stored form of the n-byte value at data's
// start that go-mysql gives as the string text makes of those bytes
// (written into *tmp, decodeValue's scratch), and returns n.
func appendFixedText(dst []byte, tmp *[]byte, c *schema.Column, data []byte, n int, text func(dst, b []byte) []byte) ([]byte, int, error) {
	if n > len(data) {
		return dst, 0, errShortImage
	}
	*tmp = text((*tmp)[:0], data[:n])
	out, err := rowimage.AppendTextValue(dst, c, *tmp, true)
	return out, n, err
}

// appendPrefixed appends the stored form of the value at data's start
// that its length, in w little-endian bytes, precedes; isString says
// whether go-mysql gives it as a string or a []byte.
func appendPrefixed(dst []byte, c *schema.Column, data []byte, w int, isString bool) ([]byte, int, error) {
	if w > len(data) {
		return dst, 0, errShortImage
	}
	n := w + int(unsignedLE(data[:w]))
	if n > len(data) {
		return dst, 0, errShortImage
	}
	out, err := rowimage.AppendTextValue(dst, c, data[w:n], isString)
	return out, n, err
}

// intWidth is the bytes of an integer binlog type.
func intWidth(tp byte) int {
	switch tp {
	case mysql.MYSQL_TYPE_TINY:
		return 1
	case mysql.MYSQL_TYPE_SHORT:
		return 2
	case mysql.MYSQL_TYPE_INT24:
		return 3
	case mysql.MYSQL_TYPE_LONG:
		return 4
	}
	return 8
}

// unsignedLE is the little-endian unsigned integer of b (at most 8 bytes).
func unsignedLE(b []byte) uint64 {
	var u uint64
	for i, x := range b {
		u |= uint64(x) << (8 * uint(i))
	}
	return u
}

// signedLE is the little-endian two's complement integer of b (1 to 8
// bytes), sign-extended.
func signedLE(b []byte) int64 {
	shift := 64 - 8*uint(len(b))
	return int64(unsignedLE(b)<<shift) >> shift
}

// appendPadded appends v in decimal with at least width digits, as
// fmt's %0*d does for a non-negative v.
func appendPadded(dst []byte, v uint64, width int) []byte {
	var buf [20]byte
	s := strconv.AppendUint(buf[:0], v, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// dateText is go-mysql's text of a DATE value v.
func dateText(dst []byte, v uint32) []byte {
	if v == 0 {
		return append(dst, "0000-00-00"...)
	}
	dst = appendPadded(dst, uint64(v/(16*32)), 4)
	dst = append(dst, '-')
	dst = appendPadded(dst, uint64(v/32%16), 2)
	dst = append(dst, '-')
	return appendPadded(dst, uint64(v%32), 2)
}

// datetime2Text is go-mysql's text of a DATETIME2 value of dec fraction
// digits (ParseTime=false), b its 5+(dec+1)/2 bytes.
func datetime2Text(dst []byte, b []byte, dec int) []byte {
	intPart := int64(bigEndian(b[:5])) - replication.DATETIMEF_INT_OFS
	frac := fracMicros(b[5:], dec)
	if intPart == 0 {
		return appendZeroDatetime(dst, frac, dec)
	}
	tmp := intPart<<24 + frac
	if tmp < 0 {
		tmp = -tmp
	}
	ymdhms := tmp >> 24
	ymd, hms := ymdhms>>17, ymdhms%(1<<17)
	ym := ymd >> 5
	dst = appendPadded(dst, uint64(ym/13), 4)
	dst = append(dst, '-')
	dst = appendPadded(dst, uint64(ym%13), 2)
	dst = append(dst, '-')
	dst = appendPadded(dst, uint64(ymd%(1<<5)), 2)
	dst = append(dst, ' ')
	dst = appendPadded(dst, uint64(hms>>12), 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, uint64((hms>>6)%(1<<6)), 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, uint64(hms%(1<<6)), 2)
	if dec == 0 {
		return dst
	}
	dst = append(dst, '.')
	dst = appendPadded(dst, uint64(frac), 6)
	return dst[:len(dst)-(6-dec)]
}

// bigEndian is the big-endian unsigned integer of b (at most 8 bytes).
func bigEndian(b []byte) uint64 {
	var u uint64
	for _, x := range b {
		u = u<<8 | uint64(x)
	}
	return u
}

// decimalDigits is how many bytes a group of 0..9 leftover digits takes.
var decimalDigits = [10]int{0, 1, 1, 2, 2, 3, 3, 4, 4, 4}

// decimalText is go-mysql's text of the DECIMAL(prec, scale) value at
// data's start (UseDecimal=false), and the bytes it takes.
func decimalText(dst []byte, data []byte, prec, scale int) ([]byte, int, error) {
	integral := prec - scale
	uncompInt, uncompFrac := integral/9, scale/9
	compInt, compFrac := integral-uncompInt*9, scale-uncompFrac*9
	if integral < 0 || compInt < 0 || compFrac < 0 {
		return dst, 0, fmt.Errorf("decimal(%d,%d) out of range", prec, scale)
	}
	size := uncompInt*4 + decimalDigits[compInt] + uncompFrac*4 + decimalDigits[compFrac]
	if size > len(data) || size == 0 || size > 40 {
		return dst, 0, errShortImage
	}
	var buf [40]byte
	b := buf[:size]
	copy(b, data)
	var mask byte
	if b[0]&0x80 == 0 {
		mask = 0xFF
		dst = append(dst, '-')
	}
	b[0] ^= 0x80
	group := func(b []byte) uint64 {
		var u uint64
		for _, x := range b {
			u = u<<8 | uint64(x^mask)
		}
		return u
	}
	pos := decimalDigits[compInt]
	leading := true
	if v := group(b[:pos]); v != 0 {
		leading = false
		dst = strconv.AppendUint(dst, v, 10)
	}
	for range uncompInt {
		v := group(b[pos : pos+4])
		pos += 4
		if v > 999999999 && !leading {
			return dst, 0, fmt.Errorf("malformed decimal(%d,%d): a group of 9 digits holds %d", prec, scale, v)
		}
		switch {
		case !leading:
			dst = appendPadded(dst, v, 9)
		case v != 0:
			leading = false
			dst = strconv.AppendUint(dst, v, 10)
		}
	}
	if leading {
		dst = append(dst, '0')
	}
	if pos < size {
		dst = append(dst, '.')
		for range uncompFrac {
			v := group(b[pos : pos+4])
			if v > 999999999 {
				return dst, 0, fmt.Errorf("malformed decimal(%d,%d): a group of 9 digits holds %d", prec, scale, v)
			}
			dst = appendPadded(dst, v, 9)
			pos += 4
		}
		if w := decimalDigits[compFrac]; w > 0 {
			dst = appendPadded(dst, group(b[pos:pos+w]), compFrac)
			pos += w
		}
	}
	return dst, size, nil
}
