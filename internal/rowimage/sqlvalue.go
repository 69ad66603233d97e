package rowimage

import (
	"fmt"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// AppendSQLValue does what AppendValue does for a value read by `SELECT`
// through database/sql with go-sql-driver/mysql and parseTime=false: v is
// the column's text, or NULL (see Cell: an empty text is an empty value,
// never NULL; convert driver output with RawCell). A live row and a captured
// image of the same stored row then encode to the same bytes.
//
// The connection must use charset utf8mb4 (character data of every charset
// then arrives as UTF-8) and time_zone '+00:00' (TIMESTAMP is printed in the
// session zone). Per type:
//   - integers and YEAR: decimal text, ZEROFILL leading zeros allowed;
//   - FLOAT/DOUBLE: the printed number is parsed and re-formatted. The server
//     prints FLOAT with ~6 significant digits, which may not identify the
//     stored float32: select FLOAT columns as CAST(col AS DOUBLE); a double
//     text for a FLOAT column is narrowed with float32(), exact for that form;
//   - BIT, BINARY, VARBINARY, BLOB, GEOMETRY: the raw bytes;
//   - uuid, inet6, inet4: the text MariaDB prints, re-formatted canonically;
//   - everything else: the text, canonicalised as AppendValue does.
func AppendSQLValue(dst []byte, c *schema.Column, v Cell) ([]byte, error) {
	if v.Null {
		return append(dst, "null"...), nil
	}
	raw := v.Text
	k, bits := kindOf(c)
	n := len(dst)
	out, err := appendSQLValue(dst, c, k, bits, raw)
	if err != nil {
		return dst[:n], err
	}
	return out, nil
}

func appendSQLValue(dst []byte, c *schema.Column, k kind, bits uint, raw []byte) ([]byte, error) {
	switch k {
	case kInt:
		return appendIntText(dst, c, bits, raw)
	case kYear:
		u, neg, err := parseIntText(raw)
		if err != nil || neg || u > 9999 {
			return dst, valueErr(c, fmt.Errorf("malformed year %q", raw))
		}
		return appendUint(dst, u), nil
	case kFloat, kDouble:
		return appendFloatText(dst, c, k, raw)
	case kEnum, kSet:
		return appendLabel(dst, c, raw)
	case kBit:
		return appendBitBytes(dst, c, raw)
	case kUUID, kInet6, kInet4:
		return appendAddrText(dst, c, k, raw)
	case kUnsupported:
		return dst, valueErr(c, fmt.Errorf("unsupported column type %q", c.Type))
	}
	return appendTextKind(dst, c, k, raw, true)
}
