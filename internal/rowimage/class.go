package rowimage

import "github.com/dbtrail/dbtrail/internal/schema"

// Class is the family of a column's canonical value, for writers that store
// values in typed columns (the Parquet snapshot writer). It is derived from
// the same classification AppendValue and AppendSQLValue use, so a typed
// writer and the canonical form can never disagree about a column.
type Class uint8

const (
	// ClassUnsupported: a column type AppendValue refuses.
	ClassUnsupported Class = iota
	// ClassInteger: tinyint..bigint; the canonical value is a JSON number of
	// exact digits. ClassOf also returns the width in bits (8, 16, 24, 32, 64);
	// the sign is Column.Unsigned.
	ClassInteger
	// ClassYear: YEAR, a JSON number 0..9999.
	ClassYear
	// ClassDecimal: a JSON string of digits with exactly Scale fraction digits.
	ClassDecimal
	// ClassFloat and ClassDouble: a JSON number that round-trips a float32 /
	// float64.
	ClassFloat
	ClassDouble
	// ClassTemporal: date, datetime, timestamp, time: a JSON string of MySQL's
	// text (never escaped: digits, '-', ':', '.', ' ').
	ClassTemporal
	// ClassText: character data, ENUM, SET and JSON: a JSON string holding
	// the UTF-8 text.
	ClassText
	// ClassBinary: binary data of any kind, including BINARY(n) (padded),
	// BIT(n) (ceil(n/8) bytes), character types with charset binary and
	// geometry: a JSON string of standard padded base64.
	ClassBinary
	// ClassAddress: MariaDB uuid, inet6, inet4: a JSON string of the canonical
	// text form (never escaped).
	ClassAddress
)

// ClassOf returns the class of c and, for ClassInteger, its width in bits.
func ClassOf(c *schema.Column) (Class, uint) {
	k, bits := kindOf(c)
	switch k {
	case kInt:
		return ClassInteger, bits
	case kYear:
		return ClassYear, 0
	case kDecimal:
		return ClassDecimal, 0
	case kFloat:
		return ClassFloat, 0
	case kDouble:
		return ClassDouble, 0
	case kDate, kDatetime, kTime:
		return ClassTemporal, 0
	case kText, kEnum, kSet, kJSON:
		return ClassText, 0
	case kFixedBinary, kBinary, kBit:
		return ClassBinary, 0
	case kUUID, kInet6, kInet4:
		return ClassAddress, 0
	}
	return ClassUnsupported, 0
}
