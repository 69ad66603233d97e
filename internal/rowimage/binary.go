package rowimage

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/dbtrail/dbtrail/internal/schema"
)

const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// appendBase64 appends b followed by (total-len(b)) zero bytes as a JSON
// string of standard, padded base64.
func appendBase64(dst, b []byte, total int) []byte {
	dst = append(dst, '"')
	head := len(b) / 3 * 3
	if total == len(b) {
		head = len(b)
	}
	dst = base64.StdEncoding.AppendEncode(dst, b[:head])
	for i := head; i < total; i += 3 {
		var g [3]byte
		n := 0
		for ; n < 3 && i+n < total; n++ {
			if i+n < len(b) {
				g[n] = b[i+n]
			}
		}
		v := uint(g[0])<<16 | uint(g[1])<<8 | uint(g[2])
		dst = append(dst, b64[v>>18&63], b64[v>>12&63])
		switch n {
		case 1:
			dst = append(dst, '=', '=')
		case 2:
			dst = append(dst, b64[v>>6&63], '=')
		default:
			dst = append(dst, b64[v>>6&63], b64[v&63])
		}
	}
	return append(dst, '"')
}

// appendBinary writes binary data as base64. BINARY(n) (kFixedBinary) is
// right-padded with 0x00 to Length bytes: the binlog drops trailing zeros.
func appendBinary(dst []byte, c *schema.Column, k kind, b []byte) ([]byte, error) {
	if k != kFixedBinary {
		return appendBase64(dst, b, len(b)), nil
	}
	if len(b) > c.Length {
		return dst, valueErr(c, fmt.Errorf("%d bytes do not fit BINARY(%d)", len(b), c.Length))
	}
	return appendBase64(dst, b, c.Length), nil
}

// bitWidth returns n and ceil(n/8) for BIT(n).
func bitWidth(c *schema.Column) (int, int, error) {
	if c.Length < 1 || c.Length > 64 {
		return 0, 0, fmt.Errorf("BIT length %d is not 1..64", c.Length)
	}
	return c.Length, (c.Length + 7) / 8, nil
}

// appendBit writes BIT(n) value u as the ceil(n/8) big-endian bytes that
// `SELECT bitcol` returns. go-mysql gives BIT as int64, so BIT(64) all ones
// arrives as -1; the caller passes the two's complement bits.
func appendBit(dst []byte, c *schema.Column, u uint64) ([]byte, error) {
	n, nb, err := bitWidth(c)
	if err != nil {
		return dst, valueErr(c, err)
	}
	if n < 64 && u>>uint(n) != 0 {
		return dst, valueErr(c, fmt.Errorf("value %#x does not fit BIT(%d)", u, n))
	}
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], u)
	return appendBase64(dst, buf[8-nb:], nb), nil
}

// appendBitBytes writes BIT bytes as SELECT returns them (big-endian, possibly
// shorter than ceil(n/8) when a caller trimmed leading zeros).
func appendBitBytes(dst []byte, c *schema.Column, b []byte) ([]byte, error) {
	_, nb, err := bitWidth(c)
	if err != nil {
		return dst, valueErr(c, err)
	}
	if len(b) > nb {
		return dst, valueErr(c, fmt.Errorf("%d bytes do not fit BIT(%d)", len(b), c.Length))
	}
	var u uint64
	for _, x := range b {
		u = u<<8 | uint64(x)
	}
	return appendBit(dst, c, u)
}

// uuidBinlogInRecordOrder says whether the 16 bytes of a MariaDB UUID column in
// the binlog are in the in-record (storage) order. They are not: MariaDB's
// UUID::pack() (plugin/type_uuid/sql_type_uuid.h, 10.7 to 11.x) converts the
// record to the in-memory order before writing, "so that replication between
// UUID and BINARY(16) is simple". The in-memory order is the text order, so
// the bytes are printed as they are. Flip this if a real server disagrees.
const uuidBinlogInRecordOrder = false

// uuidRecordSwapped is MariaDB's UUID<0>::rec_need_swap: the record holds
// nnnnnnnnnnnn-vsss-Vhhh-mmmm-llllllll when `s[6] & -s[8] & 0x80` with s as
// signed chars, i.e. the variant byte has its top bit set and the version
// byte is 0x01..0x80.
func uuidRecordSwapped(r *[16]byte) bool {
	return int(int8(r[6]))&-int(int8(r[8]))&0x80 != 0
}

// uuidMemNeedsSwap is MariaDB's mem_need_swap: the in-memory (text order)
// value is stored swapped when its version byte s[6] is 0x01..0x5F (version
// 1..5) and the variant byte s[8] has its top bit set.
func uuidMemNeedsSwap(m *[16]byte) bool {
	return int8(m[6]) > 0 && int8(m[6]) < 0x60 && m[8]&0x80 != 0
}

// uuidSegments are MariaDB's {memory pos, record pos, length} triples.
var uuidSegments = [5][3]int{{0, 12, 4}, {4, 10, 2}, {6, 8, 2}, {8, 6, 2}, {10, 0, 6}}

// uuidFromRecord converts a UUID from MariaDB 10.11's in-record order to the
// in-memory (text) order, as UUID<0>::record_to_memory does.
func uuidFromRecord(r [16]byte) [16]byte {
	if !uuidRecordSwapped(&r) {
		return r
	}
	var m [16]byte
	for _, s := range uuidSegments {
		copy(m[s[0]:s[0]+s[2]], r[s[1]:s[1]+s[2]])
	}
	return m
}

// uuidToRecord is the inverse, UUID<0>::memory_to_record.
func uuidToRecord(m [16]byte) [16]byte {
	if !uuidMemNeedsSwap(&m) {
		return m
	}
	var r [16]byte
	for _, s := range uuidSegments {
		copy(r[s[1]:s[1]+s[2]], m[s[0]:s[0]+s[2]])
	}
	return r
}

func appendUUID(dst []byte, m *[16]byte) []byte {
	dst = append(dst, '"')
	for i, x := range m {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexLower[x>>4], hexLower[x&15])
	}
	return append(dst, '"')
}

func appendInet4(dst []byte, a []byte) []byte {
	dst = append(dst, '"')
	dst = appendDotted(dst, a)
	return append(dst, '"')
}

// appendDotted writes a[:4] as "a.b.c.d" (Inet4::to_string).
func appendDotted(dst []byte, a []byte) []byte {
	for i, x := range a[:4] {
		if i > 0 {
			dst = append(dst, '.')
		}
		dst = appendUint(dst, uint64(x))
	}
	return dst
}

// appendInet6 prints an address as MariaDB's Inet6::to_string does: lower-case
// hex words without leading zeros; the first longest run of zero words (even a
// single one) becomes "::"; ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d
// (IPv4-compatible, zero run of exactly six words) end in dotted IPv4.
func appendInet6(dst []byte, a *[16]byte) []byte {
	var w [8]uint16
	for i := range w {
		w[i] = binary.BigEndian.Uint16(a[2*i:])
	}
	gapPos, gapLen := -1, -1
	for i := 0; i < 8; {
		if w[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && w[j] == 0 {
			j++
		}
		if j-i > gapLen {
			gapPos, gapLen = i, j-i
		}
		i = j
	}
	dst = append(dst, '"')
	for i := 0; i < 8; i++ {
		switch {
		case i == gapPos:
			if i == 0 {
				dst = append(dst, ':')
			}
			dst = append(dst, ':')
			i += gapLen - 1
		case i == 6 && gapPos == 0 && (gapLen == 6 || (gapLen == 5 && w[5] == 0xffff)):
			dst = appendDotted(dst, a[12:])
			return append(dst, '"')
		default:
			dst = appendHex16(dst, w[i])
			if i != 7 {
				dst = append(dst, ':')
			}
		}
	}
	return append(dst, '"')
}

func appendHex16(dst []byte, v uint16) []byte {
	started := false
	for sh := 12; sh >= 0; sh -= 4 {
		d := v >> uint(sh) & 15
		if d != 0 || started || sh == 0 {
			dst = append(dst, hexLower[d])
			started = true
		}
	}
	return dst
}

// addrSize is the binary size of a uuid, inet6 or inet4 value.
func addrSize(k kind) int {
	if k == kInet4 {
		return 4
	}
	return 16
}

// appendAddrBytes writes a uuid/inet6/inet4 value from its binlog bytes
// (fixed binary, trailing 0x00 possibly dropped).
func appendAddrBytes(dst []byte, c *schema.Column, k kind, b []byte) ([]byte, error) {
	if len(b) > addrSize(k) {
		return dst, valueErr(c, fmt.Errorf("%d bytes for a %d-byte %s", len(b), addrSize(k), c.Type))
	}
	var a [16]byte
	copy(a[:], b)
	switch k {
	case kUUID:
		if uuidBinlogInRecordOrder {
			a = uuidFromRecord(a)
		}
		return appendUUID(dst, &a), nil
	case kInet6:
		return appendInet6(dst, &a), nil
	}
	return appendInet4(dst, a[:4]), nil
}

// appendAddrText writes a uuid/inet6/inet4 value from the text SELECT prints,
// re-formatted canonically.
func appendAddrText(dst []byte, c *schema.Column, k kind, b []byte) ([]byte, error) {
	if k == kUUID {
		m, ok := parseUUID(b)
		if !ok {
			return dst, valueErr(c, fmt.Errorf("malformed uuid %q", b))
		}
		return appendUUID(dst, &m), nil
	}
	ip, err := netip.ParseAddr(bytesStr(b))
	if err != nil || ip.Zone() != "" || (k == kInet4) != ip.Is4() {
		return dst, valueErr(c, fmt.Errorf("malformed %s %q", c.Type, b))
	}
	if k == kInet4 {
		a := ip.As4()
		return appendInet4(dst, a[:]), nil
	}
	a := ip.As16()
	return appendInet6(dst, &a), nil
}

// parseUUID parses the 36-character hyphenated form (any hex case).
func parseUUID(b []byte) (m [16]byte, ok bool) {
	if len(b) != 36 || b[8] != '-' || b[13] != '-' || b[18] != '-' || b[23] != '-' {
		return m, false
	}
	j := 0
	for i := 0; i < 16; i++ {
		if j == 8 || j == 13 || j == 18 || j == 23 {
			j++
		}
		hi, ok1 := unhex(b[j])
		lo, ok2 := unhex(b[j+1])
		if !ok1 || !ok2 {
			return m, false
		}
		m[i] = hi<<4 | lo
		j += 2
	}
	return m, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
