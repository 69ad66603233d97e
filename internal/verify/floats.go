package verify

import (
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// FloatCause explains a differing key whose rows differ only in FLOAT digits
// a dump does not carry: a table whose FLOAT values a full backup could not
// make exact keeps mydumper's 6 significant digits.
const FloatCause = "the dump carries 6 significant digits; the snapshot value rounds to the live value"

// floatDigits is how many significant digits a dump gives a FLOAT.
const floatDigits = 6

// floatRounder tells, for --explain, rows that differ only by FLOAT values
// rounded to 6 significant digits. Each side's row is also hashed with its
// FLOAT values so rounded (and keyed by its rounded image, so that a table
// keyed by its whole row pairs the two rows), and each FLOAT column's value
// is hashed on its own, to name the columns that differ.
type floatRounder struct {
	cols    []int    // FLOAT column positions
	rounded [][]byte // the row with its FLOAT values rounded
	buf     []byte
	ends    []int
}

// floatTally is what a key holds for floatRounder: the live minus the
// snapshot sums of the rounded row hashes and of each FLOAT column's value
// hashes.
type floatTally struct {
	rsum uint64
	cols []uint64
}

// newFloatRounder returns a rounder for t, or nil when t has no FLOAT
// column.
func newFloatRounder(t *schema.Table) *floatRounder {
	var cols []int
	for i, c := range t.Columns {
		if c.Type == "float" {
			cols = append(cols, i)
		}
	}
	if len(cols) == 0 {
		return nil
	}
	return &floatRounder{cols: cols, rounded: make([][]byte, len(t.Columns))}
}

// round returns canon (canonical values) with each FLOAT value rounded to 6
// significant digits, as the float32 a dump's text reads back as. The
// result is valid until the next call.
func (r *floatRounder) round(canon [][]byte) [][]byte {
	copy(r.rounded, canon)
	r.buf = r.buf[:0]
	ends := r.ends[:0]
	for _, j := range r.cols {
		v := canon[j]
		x, err := strconv.ParseFloat(string(v), 32)
		if v == nil || err != nil {
			ends = append(ends, -1)
			continue
		}
		d, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', floatDigits, 64), 64)
		r.buf = strconv.AppendFloat(r.buf, float64(float32(d)), 'g', -1, 32)
		ends = append(ends, len(r.buf))
	}
	start := 0
	for n, j := range r.cols {
		if ends[n] < 0 {
			continue
		}
		r.rounded[j] = r.buf[start:ends[n]:ends[n]]
		start = ends[n]
	}
	r.ends = ends
	return r.rounded
}

// count adds one row (its canonical values and its rounded values) to tl.
func (r *floatRounder) count(tl *tally, canon, rounded [][]byte, live bool) {
	if tl.floats == nil {
		tl.floats = &floatTally{cols: make([]uint64, len(r.cols))}
	}
	sign := uint64(1)
	if !live {
		sign = ^uint64(0) // -1: the snapshot side subtracts
	}
	tl.floats.rsum += sign * snapshot.RowHash(rounded)
	for n, j := range r.cols {
		h := uint64(0x9e3779b97f4a7c15) // NULL
		if canon[j] != nil {
			h = xxhash.Sum64(canon[j])
		}
		tl.floats.cols[n] += sign * h
	}
}

// floatCauses sets the Cause of each differing key of diff whose rows
// differ only by FLOAT values rounded to 6 significant digits.
func floatCauses(t *schema.Table, keys map[string]*tally, diff []KeyDiff) {
	r := newFloatRounder(t)
	if r == nil {
		return
	}
	for i := range diff {
		tl := keys[diff[i].Key]
		if tl == nil || tl.floats == nil || tl.live != tl.snap || tl.floats.rsum != 0 {
			continue
		}
		var names []string
		for n, j := range r.cols {
			if tl.floats.cols[n] != 0 {
				names = append(names, t.Columns[j].Name)
			}
		}
		if len(names) == 0 {
			continue
		}
		diff[i].Cause = "FLOAT column " + strings.Join(names, ", ") + ": " + FloatCause
	}
}
