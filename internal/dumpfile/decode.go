package dumpfile

// Decoding of hex and bit literal digits, in place.

// unhex returns the value of a hex digit, or 255.
func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 255
}

// decodeHex decodes the hex digits in b into b itself, padding an odd count
// with a leading 0, and returns the decoded length.
func decodeHex(b []byte) int {
	out, i := 0, 0
	if len(b)%2 == 1 {
		b[0] = unhex(b[0])
		out, i = 1, 1
	}
	for ; i < len(b); i += 2 {
		b[out] = unhex(b[i])<<4 | unhex(b[i+1])
		out++
	}
	return out
}

// decodeBits decodes the '0'/'1' digits in b into big-endian bytes in b
// itself, ceil(len/8) of them, and returns the decoded length.
func decodeBits(b []byte) int {
	n := (len(b) + 7) / 8
	first := len(b) - 8*(n-1) // bits in the first byte
	i := 0
	for out := range n {
		width := 8
		if out == 0 {
			width = first
		}
		var v byte
		for range width {
			v = v<<1 | (b[i] - '0')
			i++
		}
		b[out] = v
	}
	return n
}
