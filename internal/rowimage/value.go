package rowimage

import (
	"errors"
	"fmt"
	"math"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// ErrUnexpectedType is wrapped by a ValueError when a value's Go type is not
// one the column type can come as.
var ErrUnexpectedType = errors.New("unexpected Go type")

// ValueError reports a value that cannot be mapped losslessly. Table is empty
// when the error comes from AppendValue/AppendSQLValue, which do not know the
// table; Image, SQLImage and Key fill it in.
type ValueError struct {
	Table  string // "schema.table", or ""
	Column string
	Type   string
	Err    error
}

func (e *ValueError) Error() string {
	if e.Table != "" {
		return fmt.Sprintf("column %s.%s (%s): %v", e.Table, e.Column, e.Type, e.Err)
	}
	return fmt.Sprintf("column %s (%s): %v", e.Column, e.Type, e.Err)
}

func (e *ValueError) Unwrap() error { return e.Err }

func valueErr(c *schema.Column, err error) error {
	return &ValueError{Column: c.Name, Type: c.Type, Err: err}
}

func typeErr(c *schema.Column, v any) error {
	return valueErr(c, fmt.Errorf("%w %T", ErrUnexpectedType, v))
}

// kind is the canonical-encoding family of a column type.
type kind uint8

const (
	kUnsupported kind = iota
	kInt
	kYear
	kDecimal
	kFloat
	kDouble
	kDate
	kDatetime // datetime and timestamp
	kTime
	kText
	kEnum
	kSet
	kJSON
	kFixedBinary // binary(n): padded to Length
	kBinary      // varbinary, blobs, geometry, vector
	kBit
	kUUID
	kInet6
	kInet4
)

// kindOf classifies c and, for integers, returns the width in bits.
func kindOf(c *schema.Column) (kind, uint) {
	switch c.Type {
	case "tinyint", "bool", "boolean":
		return kInt, 8
	case "smallint":
		return kInt, 16
	case "mediumint":
		return kInt, 24
	case "int", "integer":
		return kInt, 32
	case "bigint":
		return kInt, 64
	case "year":
		return kYear, 0
	case "decimal", "numeric", "dec", "fixed":
		return kDecimal, 0
	case "float":
		return kFloat, 0
	case "double", "real", "double precision":
		return kDouble, 0
	case "date":
		return kDate, 0
	case "datetime", "timestamp":
		return kDatetime, 0
	case "time":
		return kTime, 0
	case "char":
		if c.Charset == "binary" {
			return kFixedBinary, 0
		}
		return kText, 0
	case "varchar", "tinytext", "text", "mediumtext", "longtext":
		if c.Charset == "binary" {
			return kBinary, 0
		}
		return kText, 0
	case "enum":
		return kEnum, 0
	case "set":
		return kSet, 0
	case "json":
		return kJSON, 0
	case "binary":
		return kFixedBinary, 0
	case "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "vector",
		"geometry", "point", "linestring", "polygon", "multipoint",
		"multilinestring", "multipolygon", "geometrycollection", "geomcollection":
		return kBinary, 0
	case "bit":
		return kBit, 0
	case "uuid":
		return kUUID, 0
	case "inet6":
		return kInet6, 0
	case "inet4":
		return kInet4, 0
	}
	return kUnsupported, 0
}

// AppendValue converts one value as go-mysql's replication.RowsEvent decodes
// it (BinlogSyncerConfig: ParseTime=false, UseDecimal=false,
// TimestampStringLocation=time.UTC, RenderJSONAsMySQLText=true) for column c
// into the canonical JSON value text appended to dst.
//
// Accepted Go types: nil (NULL) for every column; int8..int64, int and
// uint8..uint64 for integers, YEAR, BIT, ENUM (index) and SET (bitmask) —
// signed values of an UNSIGNED integer column are reinterpreted at the
// column's width (tinyint 8 bits, smallint 16, mediumint 24, int 32, bigint
// 64), as go-mysql produces them when signedness metadata is missing; float32
// and float64 for FLOAT/DOUBLE; string or []byte for everything textual or
// binary (decimal text, date/time text, character data, JSON text, binary
// data, ENUM/SET labels, raw BIT bytes). For a JSON column the two differ: a
// string is go-mysql's rendering of MySQL binary JSON, []byte stored text
// (MariaDB); see the package documentation. Anything else is a *ValueError
// wrapping ErrUnexpectedType. On error dst is returned unchanged in length.
//
// It does not allocate beyond growing dst, except on error.
func AppendValue(dst []byte, c *schema.Column, v any) ([]byte, error) {
	if v == nil {
		return append(dst, "null"...), nil
	}
	k, bits := kindOf(c)
	n := len(dst)
	out, err := appendValue(dst, c, k, bits, v)
	if err != nil {
		return dst[:n], err
	}
	return out, nil
}

func appendValue(dst []byte, c *schema.Column, k kind, bits uint, v any) ([]byte, error) {
	if b, isText := textOf(v); isText {
		_, isString := v.(string)
		return appendText(dst, c, k, b, isString)
	}
	if mag, neg, ok := intOf(v); ok {
		mask, _ := setMaskOf(v)
		out, ok, err := appendInteger(dst, c, k, bits, mag, neg, mask)
		if ok {
			return out, err
		}
	}
	switch k {
	case kFloat, kDouble:
		return appendFloatValue(dst, c, k, v)
	case kUnsupported:
		return dst, valueErr(c, fmt.Errorf("unsupported column type %q", c.Type))
	case kJSON:
		return dst, valueErr(c, fmt.Errorf("%w %T (partial JSON updates need binlog_row_value_options='')", ErrUnexpectedType, v))
	}
	return dst, typeErr(c, v)
}

// appendInteger writes an integer value, given as its magnitude and sign
// and as its 64-bit pattern (mask, for SET and BIT), for the kinds that
// take integers; ok is false for the other kinds (nothing written).
func appendInteger(dst []byte, c *schema.Column, k kind, bits uint, mag uint64, neg bool, mask uint64) (out []byte, ok bool, err error) {
	switch k {
	case kInt:
		out, err = appendIntMag(dst, c, bits, mag, neg)
	case kYear:
		if neg || mag > 9999 {
			return dst, true, valueErr(c, fmt.Errorf("year out of range"))
		}
		out = appendUint(dst, mag)
	case kEnum:
		if neg {
			return dst, true, valueErr(c, fmt.Errorf("negative ENUM index"))
		}
		out, err = appendEnum(dst, c, mag)
	case kSet:
		out, err = appendSet(dst, c, mask)
	case kBit:
		out, err = appendBit(dst, c, mask)
	default:
		return dst, false, nil
	}
	return out, true, err
}

// appendText writes a value that go-mysql gives as text: a string
// (isString) or []byte.
func appendText(dst []byte, c *schema.Column, k kind, b []byte, isString bool) ([]byte, error) {
	switch k {
	case kInt, kYear, kFloat, kDouble:
		if isString {
			return dst, typeErr(c, string(b))
		}
		return dst, typeErr(c, b)
	case kEnum, kSet:
		return appendLabel(dst, c, b)
	case kBit:
		return appendBitBytes(dst, c, b)
	case kUUID, kInet6, kInet4:
		return appendAddrBytes(dst, c, k, b)
	case kUnsupported:
		return dst, valueErr(c, fmt.Errorf("unsupported column type %q", c.Type))
	case kJSON:
		return appendJSONDoc(dst, c, b, isString) // see appendJSONDoc
	}
	return appendTextKind(dst, c, k, b, false)
}

// AppendTextValue is AppendValue for a value go-mysql gives as text, a
// string (isString) or a []byte holding b, without boxing it.
func AppendTextValue(dst []byte, c *schema.Column, b []byte, isString bool) ([]byte, error) {
	k, _ := kindOf(c)
	n := len(dst)
	out, err := appendText(dst, c, k, b, isString)
	if err != nil {
		return dst[:n], err
	}
	return out, nil
}

// AppendIntValue is AppendValue for an integer that go-mysql gives as a
// signed Go integer of any width (widened to v), without boxing it.
func AppendIntValue(dst []byte, c *schema.Column, v int64) ([]byte, error) {
	k, bits := kindOf(c)
	mag, neg, _ := intOf(v)
	n := len(dst)
	out, ok, err := appendInteger(dst, c, k, bits, mag, neg, uint64(v))
	if !ok {
		return AppendValue(dst, c, v) // the error for a column that takes no integer
	}
	if err != nil {
		return dst[:n], err
	}
	return out, nil
}

// AppendFloatValue is AppendValue for a FLOAT (single: float32) or DOUBLE
// binlog value f, without boxing it.
func AppendFloatValue(dst []byte, c *schema.Column, f float64, single bool) ([]byte, error) {
	k, _ := kindOf(c)
	if k != kFloat && k != kDouble {
		if single {
			return AppendValue(dst, c, float32(f))
		}
		return AppendValue(dst, c, f)
	}
	n := len(dst)
	out, err := appendFloatBits(dst, c, k, f, single)
	if err != nil {
		return dst[:n], err
	}
	return out, nil
}

// appendTextKind encodes the kinds whose value is text or bytes in both
// sources. fromSQL selects database/sql semantics: character data is already
// UTF-8 (the connection charset) whatever the column charset.
func appendTextKind(dst []byte, c *schema.Column, k kind, b []byte, fromSQL bool) ([]byte, error) {
	switch k {
	case kDecimal:
		return appendDecimal(dst, c, b)
	case kDate:
		return appendDate(dst, c, b)
	case kDatetime:
		return appendDatetime(dst, c, b)
	case kTime:
		return appendTime(dst, c, b)
	case kText:
		if fromSQL {
			return appendUTF8(dst, c, b)
		}
		return appendCharData(dst, c, b)
	case kJSON:
		return appendJSONDoc(dst, c, b, false)
	case kFixedBinary, kBinary:
		return appendBinary(dst, c, k, b)
	}
	return dst, valueErr(c, fmt.Errorf("unsupported column type %q", c.Type))
}

// textOf returns the bytes of a string or []byte without copying. The result
// is only read, never written or retained.
func textOf(v any) ([]byte, bool) {
	switch x := v.(type) {
	case string:
		return strBytes(x), true
	case []byte:
		return x, true
	}
	return nil, false
}

// intOf returns the magnitude and sign of any Go integer.
func intOf(v any) (mag uint64, neg bool, ok bool) {
	var s int64
	switch x := v.(type) {
	case int8:
		s = int64(x)
	case int16:
		s = int64(x)
	case int32:
		s = int64(x)
	case int64:
		s = x
	case int:
		s = int64(x)
	case uint8:
		return uint64(x), false, true
	case uint16:
		return uint64(x), false, true
	case uint32:
		return uint64(x), false, true
	case uint64:
		return x, false, true
	case uint:
		return uint64(x), false, true
	default:
		return 0, false, false
	}
	if s < 0 {
		return uint64(-(s + 1)) + 1, true, true
	}
	return uint64(s), false, true
}

// setMaskOf returns a 64-bit pattern: a signed value is reinterpreted as its
// two's complement bits (go-mysql gives SET and BIT as int64, so a mask with
// bit 63 set arrives negative).
func setMaskOf(v any) (uint64, bool) {
	switch x := v.(type) {
	case int8:
		return uint64(uint8(x)), true
	case int16:
		return uint64(uint16(x)), true
	case int32:
		return uint64(uint32(x)), true
	case int64:
		return uint64(x), true
	case int:
		return uint64(x), true
	}
	u, _, ok := intOf(v)
	return u, ok
}

// appendIntValue writes an integer of a column of the given width in bits.
func appendIntValue(dst []byte, c *schema.Column, bits uint, v any) ([]byte, error) {
	mag, neg, ok := intOf(v)
	if !ok {
		return dst, typeErr(c, v)
	}
	return appendIntMag(dst, c, bits, mag, neg)
}

// appendIntMag writes the integer of magnitude mag (negative when neg) of a
// column of the given width in bits, checking its range. A negative value
// for an unsigned column is reinterpreted at the width (go-mysql without
// signedness metadata); text callers refuse it before.
func appendIntMag(dst []byte, c *schema.Column, bits uint, mag uint64, neg bool) ([]byte, error) {
	maxU := uint64(math.MaxUint64) >> (64 - bits)
	if c.Unsigned {
		if neg {
			if mag > 1<<(bits-1) {
				return dst, valueErr(c, fmt.Errorf("value -%d out of range for %d-bit integer", mag, bits))
			}
			mag = (maxU - mag + 1) & maxU
		} else if mag > maxU {
			return dst, valueErr(c, fmt.Errorf("value %d out of range for unsigned %d-bit integer", mag, bits))
		}
		return appendUint(dst, mag), nil
	}
	limit := uint64(1) << (bits - 1) // -limit .. limit-1
	if (neg && mag > limit) || (!neg && mag >= limit) {
		return dst, valueErr(c, fmt.Errorf("value out of range for signed %d-bit integer", bits))
	}
	if neg {
		dst = append(dst, '-')
	}
	return appendUint(dst, mag), nil
}

func appendFloatValue(dst []byte, c *schema.Column, k kind, v any) ([]byte, error) {
	switch x := v.(type) {
	case float32:
		return appendFloatBits(dst, c, k, float64(x), true)
	case float64:
		return appendFloatBits(dst, c, k, x, false)
	}
	return dst, typeErr(c, v)
}

// appendFloatBits writes f, a float32 widened when single, for a FLOAT or
// DOUBLE column (kind k).
func appendFloatBits(dst []byte, c *schema.Column, k kind, f float64, single bool) ([]byte, error) {
	if !single && k == kFloat && !math.IsNaN(f) && float64(float32(f)) != f {
		return dst, valueErr(c, fmt.Errorf("float64 %v is not a float32 value", f))
	}
	return appendFloat(dst, c, k, f)
}
