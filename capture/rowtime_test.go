package capture

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// truncFrac is usec (0..999999) cut to dec digits.
func truncFrac(usec int64, dec int) int64 {
	unit := int64(1)
	for range 6 - dec {
		unit *= 10
	}
	return usec / unit * unit
}

// appendFrac appends the fraction usec of dec digits as MySQL stores it
// after a TIMESTAMP2, DATETIME2 or TIME2: frac may be negative (a negative
// TIME's remainder), stored two's complement.
func appendFrac(b []byte, frac int64, dec int) []byte {
	switch dec {
	case 1, 2:
		return append(b, byte(frac/10000))
	case 3, 4:
		return binary.BigEndian.AppendUint16(b, uint16(frac/100))
	case 5, 6:
		return append(b, byte(frac>>16), byte(frac>>8), byte(frac))
	}
	return b
}

// time2Bytes is MySQL's binlog form of a TIME2 of dec digits whose packed
// value (seconds part shifted left 24 plus microseconds) is packed,
// negative for a negative time.
func time2Bytes(packed int64, dec int) []byte {
	if dec >= 5 {
		v := packed + time2PackedOffset
		return []byte{byte(v >> 40), byte(v >> 32), byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
	}
	whole := packed>>24 + time2IntOffset
	return appendFrac([]byte{byte(whole >> 16), byte(whole >> 8), byte(whole)}, packed%(1<<24), dec)
}

// temporalCols are TIMESTAMP and TIME columns of every FSP, old and new
// binlog types, with zero, negative and extreme values and, now and then,
// random bytes.
func temporalCols() []directCol {
	var cols []directCol
	for fsp := range 7 {
		cols = append(cols, directCol{col: schema.Column{Type: "timestamp", FSP: fsp}, tp: mysql.MYSQL_TYPE_TIMESTAMP2, meta: uint16(fsp),
			gen: func(r *rand.Rand) []byte {
				if r.IntN(10) == 0 {
					return randBytes(r, 4+fracBytes(fsp))
				}
				sec := r.Uint32()
				switch r.IntN(6) {
				case 0:
					sec = 0 // the zero timestamp
				case 1:
					sec = 1<<31 - 1 // 2038-01-19 03:14:07
				}
				b := binary.BigEndian.AppendUint32(nil, sec)
				return appendFrac(b, truncFrac(r.Int64N(1000000), fsp), fsp)
			}})
		cols = append(cols, directCol{col: schema.Column{Type: "time", FSP: fsp}, tp: mysql.MYSQL_TYPE_TIME2, meta: uint16(fsp),
			gen: func(r *rand.Rand) []byte {
				if r.IntN(10) == 0 {
					return randBytes(r, 3+fracBytes(fsp))
				}
				h, m, s := r.Int64N(839), r.Int64N(60), r.Int64N(60)
				usec := truncFrac(r.Int64N(1000000), fsp)
				switch r.IntN(6) {
				case 0:
					h, m, s = 838, 59, 59 // the maximum, and with a sign the minimum
				case 1:
					h, m, s = 0, 0, 0 // -00:00:00.5 and the like
				case 2:
					usec = 0
				}
				packed := (h<<12|m<<6|s)<<24 + usec
				if r.IntN(2) == 0 {
					packed = -packed
				}
				return time2Bytes(packed, fsp)
			}})
	}
	cols = append(cols,
		directCol{col: schema.Column{Type: "timestamp"}, tp: mysql.MYSQL_TYPE_TIMESTAMP, gen: func(r *rand.Rand) []byte {
			if r.IntN(5) == 0 {
				return make([]byte, 4)
			}
			return randBytes(r, 4)
		}},
		directCol{col: schema.Column{Type: "time"}, tp: mysql.MYSQL_TYPE_TIME, gen: func(r *rand.Rand) []byte {
			v := r.Int64N(839)*10000 + r.Int64N(60)*100 + r.Int64N(60)
			switch r.IntN(5) {
			case 0:
				v = 0
			case 1:
				v = int64(r.UintN(1 << 24))
			}
			return []byte{byte(v), byte(v >> 8), byte(v >> 16)}
		}})
	return cols
}

// bitCols are BIT(n) columns, their values all ones, zero, random, and
// now and then with bits beyond n set (an error on both paths).
func bitCols() []directCol {
	var cols []directCol
	for _, n := range []int{1, 2, 8, 12, 63, 64} {
		nb := (n + 7) / 8
		cols = append(cols, directCol{col: schema.Column{Type: "bit", Length: n}, tp: mysql.MYSQL_TYPE_BIT, meta: uint16(n/8)<<8 | uint16(n%8),
			gen: func(r *rand.Rand) []byte {
				b := randBytes(r, nb)
				switch r.IntN(4) {
				case 0:
					for i := range b {
						b[i] = 0xFF
					}
				case 1:
					clear(b)
				}
				if r.IntN(40) != 0 && n%8 != 0 {
					b[0] &= byte(1<<(n%8) - 1)
				}
				return b
			}})
	}
	return cols
}

// TestTemporalTextEdges: the texts of TIMESTAMP and TIME edge values, as
// go-mysql (and MySQL) write them.
func TestTemporalTextEdges(t *testing.T) {
	for _, tc := range []struct {
		b    []byte
		dec  int
		want string
		ts   bool
	}{
		{[]byte{0, 0, 0, 0}, 0, "0000-00-00 00:00:00", true},
		{[]byte{0, 0, 0, 0, 0, 0, 0}, 6, "0000-00-00 00:00:00.000000", true},
		{[]byte{0x7F, 0xFF, 0xFF, 0xFF, 0x27, 0x06}, 3, "2038-01-19 03:14:07.999", true},
		{[]byte{0, 0, 0, 1, 50}, 1, "1970-01-01 00:00:01.5", true},
		{time2Bytes(-500000, 1), 1, "-00:00:00.5", false},
		{time2Bytes(-1, 6), 6, "-00:00:00.000001", false},
		{time2Bytes(-(838<<12|59<<6|59)<<24, 0), 0, "-838:59:59", false},
		{time2Bytes((838<<12|59<<6|59)<<24, 0), 0, "838:59:59", false},
		{time2Bytes(-(1<<24 + 10000), 2), 2, "-00:00:01.01", false},
		{time2Bytes(1<<24|120000, 4), 4, "00:00:01.1200", false},
		{time2Bytes(0, 5), 5, "00:00:00", false},
		{time2Bytes(1<<24, 3), 3, "00:00:01", false}, // go-mysql writes no zero fraction
	} {
		var got []byte
		if tc.ts {
			got = timestamp2Text(nil, tc.b, tc.dec)
		} else {
			got = time2Text(nil, tc.b, tc.dec)
		}
		if string(got) != tc.want {
			t.Errorf("%x (%d digits): %q, want %q", tc.b, tc.dec, got, tc.want)
		}
	}
}

// TestDirectTruncatedValues: a TIMESTAMP, TIME or BIT value cut short is
// an error, never a panic or a read past the image.
func TestDirectTruncatedValues(t *testing.T) {
	for _, c := range append(temporalCols(), bitCols()...) {
		c.col.Name = "c"
		full := c.gen(rand.New(rand.NewPCG(3, 4)))
		for n := range len(full) {
			data := full[:n:n]
			var tmp []byte
			if _, _, err := decodeValue(nil, &tmp, &c.col, c.tp, c.meta, data); err != errShortImage {
				t.Errorf("%s(%d) type %d cut to %d bytes: error %v, want errShortImage", c.col.Type, c.meta, c.tp, n, err)
			}
		}
		var tmp []byte
		if _, n, err := decodeValue(nil, &tmp, &c.col, c.tp, c.meta, full); n != len(full) && err == nil {
			t.Errorf("%s(%d): took %d bytes of %d", c.col.Type, c.meta, n, len(full))
		}
	}
}
