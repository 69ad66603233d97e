package capture

import (
	"encoding/binary"
	"time"
)

// The texts go-mysql gives (ParseTime=false, TimestampStringLocation UTC,
// as capture configures it) for TIMESTAMP, TIME and BIT values, decoded
// straight from the binlog bytes; see rowimage.go.

// timestampLayouts are the time.Format layouts of a TIMESTAMP of 0 to 6
// fraction digits: go-mysql formats a non-zero TIMESTAMP with them, so the
// fraction is truncated, never rounded.
var timestampLayouts = [7]string{
	"2006-01-02 15:04:05",
	"2006-01-02 15:04:05.0",
	"2006-01-02 15:04:05.00",
	"2006-01-02 15:04:05.000",
	"2006-01-02 15:04:05.0000",
	"2006-01-02 15:04:05.00000",
	"2006-01-02 15:04:05.000000",
}

// fracBytes is the bytes of the fraction of a TIME2, DATETIME2 or
// TIMESTAMP2 of dec fraction digits.
func fracBytes(dec int) int { return (dec + 1) / 2 }

// fracMicros is the fraction of a TIMESTAMP2 or DATETIME2 of dec digits
// in microseconds, b its fracBytes(dec) big-endian bytes.
func fracMicros(b []byte, dec int) int64 {
	switch dec {
	case 1, 2:
		return int64(b[0]) * 10000
	case 3, 4:
		return int64(binary.BigEndian.Uint16(b[:2])) * 100
	case 5, 6:
		return int64(bigEndian(b[:3]))
	}
	return 0
}

// appendZeroDatetime appends the zero DATETIME or TIMESTAMP of dec
// fraction digits with fraction frac (microseconds) as go-mysql writes it:
// the fraction zero-padded to six digits, then its last 6-dec characters
// cut.
func appendZeroDatetime(dst []byte, frac int64, dec int) []byte {
	if dec == 0 {
		return append(dst, "0000-00-00 00:00:00"...)
	}
	dst = append(dst, "0000-00-00 00:00:00."...)
	dst = appendPadded(dst, uint64(frac), 6)
	return dst[:len(dst)-(6-dec)]
}

// timestamp2Text is go-mysql's text of a TIMESTAMP2 value of dec fraction
// digits, b its 4+fracBytes(dec) bytes: seconds since the epoch, big-endian,
// then the fraction; the time in UTC.
func timestamp2Text(dst []byte, b []byte, dec int) []byte {
	sec := int64(binary.BigEndian.Uint32(b[:4]))
	frac := fracMicros(b[4:], dec)
	if sec == 0 {
		return appendZeroDatetime(dst, frac, dec)
	}
	return time.Unix(sec, frac*1000).UTC().AppendFormat(dst, timestampLayouts[dec])
}

// timestampText is go-mysql's text of an old TIMESTAMP value (no fraction),
// b its 4 little-endian bytes of seconds since the epoch; in UTC.
func timestampText(dst []byte, b []byte) []byte {
	sec := int64(binary.LittleEndian.Uint32(b[:4]))
	if sec == 0 {
		return append(dst, "0000-00-00 00:00:00"...)
	}
	return time.Unix(sec, 0).UTC().AppendFormat(dst, timestampLayouts[0])
}

// timeText is go-mysql's text of an old TIME value, v its 3 little-endian
// bytes read unsigned as HHMMSS in decimal.
func timeText(dst []byte, v uint32) []byte {
	dst = appendPadded(dst, uint64(v/10000), 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, uint64(v%10000/100), 2)
	dst = append(dst, ':')
	return appendPadded(dst, uint64(v%100), 2)
}

// time2 offsets: a TIME2's 3-byte integer part and 6-byte packed value are
// stored plus these, for binary sort order.
const (
	time2IntOffset    = 0x800000
	time2PackedOffset = 0x800000000000
)

// time2Text is go-mysql's text of a TIME2 value of dec fraction digits, b
// its 3+fracBytes(dec) big-endian bytes. The packed value is the seconds
// part (hours 10 bits, minutes 6, seconds 6) shifted left 24 plus the
// microseconds, negative for a negative time; a negative time of 1 to 4
// digits stores its fraction counted back from the next whole second. The
// fraction is written only when it is not zero, zero-padded to six digits
// and then cut by 6-dec characters.
func time2Text(dst []byte, b []byte, dec int) []byte {
	var packed int64
	switch dec {
	case 1, 2, 3, 4:
		whole := int64(bigEndian(b[:3])) - time2IntOffset
		frac, unit, span := int64(b[3]), int64(10000), int64(0x100)
		if dec > 2 {
			frac, unit, span = int64(binary.BigEndian.Uint16(b[3:5])), 100, 0x10000
		}
		if whole < 0 && frac != 0 {
			whole++
			frac -= span
		}
		packed = whole<<24 + frac*unit
	case 5, 6:
		packed = int64(bigEndian(b[:6])) - time2PackedOffset
	default:
		packed = (int64(bigEndian(b[:3])) - time2IntOffset) << 24
	}
	if packed < 0 {
		dst = append(dst, '-')
		packed = -packed
	}
	hms := packed >> 24
	dst = appendPadded(dst, uint64(hms>>12%(1<<10)), 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, uint64(hms>>6%(1<<6)), 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, uint64(hms%(1<<6)), 2)
	if micros := packed % (1 << 24); micros != 0 {
		dst = append(dst, '.')
		dst = appendPadded(dst, uint64(micros), 6)
		dst = dst[:len(dst)-(6-dec)]
	}
	return dst
}

// bitCount is the bits of a BIT column whose table map meta is meta (its
// bytes in the high byte, its bits beyond them in the low byte).
func bitCount(meta uint16) int { return int(meta>>8)*8 + int(meta&0xFF) }
