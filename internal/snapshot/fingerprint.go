package snapshot

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// nullMarker stands for a NULL value in the hash input, in place of a length.
// No canonical value is 4 GiB long, so it cannot collide with a length.
const nullMarker = 0xFFFFFFFF

// RowHash is the per-row hash of docs/verify.md: XXH64 (seed 0, as
// github.com/cespare/xxhash/v2 computes it) over the row's columns in table
// order, each framed as
//
//	NULL:      FF FF FF FF
//	otherwise: uint32 little-endian byte length, then the bytes
//
// where each element of canonical is the column's canonical JSON value text
// as rowimage.AppendSQLValue (or rowimage.AppendValue) writes it. An element that is
// nil or exactly `null` is NULL: no non-NULL canonical value is either
// (strings are quoted), so the framing is unambiguous. The same function runs
// over a live table (values from SELECT through rowimage.AppendSQLValue) and over
// a snapshot (TableWriter computes it as it writes).
func RowHash(canonical [][]byte) uint64 {
	var stack [512]byte
	buf := stack[:0]
	for _, v := range canonical {
		buf = appendFramed(buf, v)
	}
	return xxhash.Sum64(buf)
}

// appendFramed appends one column's hash framing.
func appendFramed(dst, v []byte) []byte {
	if v == nil || string(v) == "null" {
		return binary.LittleEndian.AppendUint32(dst, nullMarker)
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v)))
	return append(dst, v...)
}

// Fingerprint is a table's order-independent fingerprint: the row count and
// the wrapping 64-bit sum of the RowHash of every row. Two tables with the
// same rows (as a multiset) have equal fingerprints whatever the row order.
// The zero value is the fingerprint of an empty table.
type Fingerprint struct {
	Rows int64
	Sum  uint64
}

// Add counts one row with the given RowHash.
func (f *Fingerprint) Add(rowHash uint64) {
	f.Rows++
	f.Sum += rowHash
}

// Merge adds the rows of g, e.g. of a table read in parallel parts.
func (f *Fingerprint) Merge(g Fingerprint) {
	f.Rows += g.Rows
	f.Sum += g.Sum
}

// String returns "rows:sum" with the sum as 16 lower-case hex digits, e.g.
// "3:00000000deadbeef". This is the form in footers and manifests.
func (f Fingerprint) String() string {
	return strconv.FormatInt(f.Rows, 10) + ":" + fmt.Sprintf("%016x", f.Sum)
}

// ParseFingerprint parses the String form.
func ParseFingerprint(s string) (Fingerprint, error) {
	rows, sum, ok := strings.Cut(s, ":")
	if !ok || len(sum) != 16 {
		return Fingerprint{}, fmt.Errorf("malformed fingerprint %q", s)
	}
	n, err := strconv.ParseInt(rows, 10, 64)
	if err != nil || n < 0 {
		return Fingerprint{}, fmt.Errorf("malformed fingerprint %q", s)
	}
	u, err := strconv.ParseUint(sum, 16, 64)
	if err != nil {
		return Fingerprint{}, fmt.Errorf("malformed fingerprint %q", s)
	}
	return Fingerprint{Rows: n, Sum: u}, nil
}

// MarshalText writes the String form (used by the manifest's JSON).
func (f Fingerprint) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText parses the String form.
func (f *Fingerprint) UnmarshalText(b []byte) error {
	g, err := ParseFingerprint(string(b))
	if err != nil {
		return err
	}
	*f = g
	return nil
}
