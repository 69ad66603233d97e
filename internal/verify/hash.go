package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strings"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// hasher turns rows in the SQL text form into the table fingerprint of
// docs/verify.md, exactly as snapshot.TableWriter.AppendSQL computes it:
// each value canonicalised with rowimage.AppendSQLValue (nil stays NULL), the
// row hashed with snapshot.RowHash, the hashes added to a Fingerprint. With
// keys set it also keeps, per row key (rowimage.KeyFromImage over the row's
// canonical image), the rows seen on each side and the difference of their
// hash sums, for --explain.
type hasher struct {
	t     *schema.Table
	fp    snapshot.Fingerprint
	rows  int64
	buf   []byte
	ends  []int
	canon [][]byte
	img   []byte
	names [][]byte          // `"name":` of each column, for images
	keys  map[string]*tally // nil unless explaining; shared by both sides
	live  bool              // which side this hasher counts for
	fl    *floatRounder     // explaining a table with FLOAT columns
}

// tally is what one key holds on both sides: row counts and the live hash
// sum minus the snapshot hash sum (wrapping).
type tally struct {
	live, snap int64
	sum        uint64
	floats     *floatTally // with a floatRounder
}

func newHasher(t *schema.Table, keys map[string]*tally, live bool) *hasher {
	h := &hasher{t: t, keys: keys, live: live, canon: make([][]byte, len(t.Columns)), ends: make([]int, len(t.Columns))}
	if keys != nil {
		h.fl = newFloatRounder(t)
		for _, c := range t.Columns {
			n, _ := json.Marshal(c.Name)
			h.names = append(h.names, append(n, ':'))
		}
	}
	return h
}

// add counts one row (one value per column in table order). Errors name the
// table, the row (1-based, in reading order) and the column.
func (h *hasher) add(row []rowimage.Cell) error {
	h.rows++
	if len(row) != len(h.t.Columns) {
		return fmt.Errorf("table %s row %d: %d values for %d columns", h.t.QualifiedName(), h.rows, len(row), len(h.t.Columns))
	}
	buf := h.buf[:0]
	for i, v := range row {
		var err error
		if buf, err = rowimage.AppendSQLValue(buf, &h.t.Columns[i], v); err != nil { // NULL: null
			return fmt.Errorf("table %s row %d: %w", h.t.QualifiedName(), h.rows, err)
		}
		h.ends[i] = len(buf)
	}
	h.buf = buf
	start := 0
	for i, end := range h.ends {
		h.canon[i] = buf[start:end:end]
		start = end
	}
	hash := snapshot.RowHash(h.canon)
	h.fp.Add(hash)
	if h.keys == nil {
		return nil
	}
	return h.addKey(hash)
}

// addKey records the row's hash under its key.
func (h *hasher) addKey(hash uint64) error {
	canon := h.canon
	if h.fl != nil {
		canon = h.fl.round(h.canon) // a row keyed by its FLOAT values pairs with its rounded copy
	}
	img := append(h.img[:0], '{')
	for i, v := range canon {
		if i > 0 {
			img = append(img, ',')
		}
		img = append(img, h.names[i]...)
		if v == nil {
			v = []byte("null")
		}
		img = append(img, v...)
	}
	h.img = append(img, '}')
	key, err := rowimage.KeyFromImage(h.t, h.img)
	if err != nil {
		return fmt.Errorf("table %s row %d: key: %w", h.t.QualifiedName(), h.rows, err)
	}
	tl := h.keys[key]
	if tl == nil {
		tl = &tally{}
		h.keys[key] = tl
	}
	if h.live {
		tl.live++
		tl.sum += hash
	} else {
		tl.snap++
		tl.sum -= hash
	}
	if h.fl != nil {
		h.fl.count(tl, h.canon, canon, h.live)
	}
	return nil
}

// SnapshotFingerprint reads r to its end and recomputes the table's
// fingerprint from its rows, with the same function as LiveFingerprint. A
// result that differs from the fingerprint in r's footer is an error (the
// file is not what its writer hashed). It does not close r.
func SnapshotFingerprint(r *snapshot.TableReader) (snapshot.Fingerprint, error) {
	h := newHasher(r.Table(), nil, false)
	return readSnapshot(r, h)
}

func readSnapshot(r *snapshot.TableReader, h *hasher) (snapshot.Fingerprint, error) {
	name := r.Table().QualifiedName()
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return h.fp, fmt.Errorf("table %s: snapshot file after row %d: %w", name, h.rows, err)
		}
		if err := h.add(row); err != nil {
			return h.fp, fmt.Errorf("snapshot file: %w", err)
		}
	}
	if f := r.Footer().Fingerprint; h.fp != f {
		return h.fp, fmt.Errorf("table %s: fingerprint recomputed from the snapshot file's rows is %s, its footer says %s", name, h.fp, f)
	}
	return h.fp, nil
}

// KeyDiff is one key whose rows differ between the live table and the
// snapshot: Live and Snap count its rows on each side (1 and 1: the values
// differ; 1 and 0: only live; 0 and 1: only in the snapshot; more for a
// table without a key, whose key is the whole row).
type KeyDiff struct {
	Key  string `json:"key"` // rowimage.Key form, e.g. [42] or [7,"abc"]
	Live int64  `json:"live"`
	Snap int64  `json:"snap"`
	// Cause explains values that differ when it is known: FLOAT digits the
	// dump did not carry ("FLOAT column f: " + FloatCause).
	Cause string `json:"cause,omitempty"`
}

func (d KeyDiff) String() string {
	switch {
	case d.Live == d.Snap && d.Cause != "":
		return d.Key + " values differ: " + d.Cause
	case d.Live == d.Snap:
		return d.Key + " values differ"
	case d.Snap == 0 && d.Live == 1:
		return d.Key + " only live"
	case d.Live == 0 && d.Snap == 1:
		return d.Key + " only in the snapshot"
	}
	return fmt.Sprintf("%s %d live rows, %d in the snapshot", d.Key, d.Live, d.Snap)
}

// diffs returns the differing keys in key order (compareKeys), at most max,
// and how many there are in all.
func diffs(keys map[string]*tally, max int) ([]KeyDiff, int) {
	var all []string
	for k, tl := range keys {
		if tl.live != tl.snap || tl.sum != 0 {
			all = append(all, k)
		}
	}
	sort.Slice(all, func(i, j int) bool { return compareKeys(all[i], all[j]) < 0 })
	n := len(all)
	if len(all) > max {
		all = all[:max]
	}
	out := make([]KeyDiff, len(all))
	for i, k := range all {
		out[i] = KeyDiff{Key: k, Live: keys[k].live, Snap: keys[k].snap}
	}
	return out, n
}

// compareKeys orders two keys (JSON arrays of canonical values) element by
// element: numbers by value, anything else (strings, null) by its JSON text,
// a number before a non-number. Keys that are not JSON arrays compare as text.
func compareKeys(a, b string) int {
	var ea, eb []json.RawMessage
	if json.Unmarshal([]byte(a), &ea) != nil || json.Unmarshal([]byte(b), &eb) != nil {
		return strings.Compare(a, b)
	}
	for i := 0; i < len(ea) && i < len(eb); i++ {
		na, aNum := number(ea[i])
		nb, bNum := number(eb[i])
		c := 0
		switch {
		case aNum && bNum:
			c = na.Cmp(nb)
		case aNum:
			c = -1
		case bNum:
			c = 1
		default:
			c = bytes.Compare(ea[i], eb[i])
		}
		if c != 0 {
			return c
		}
	}
	return len(ea) - len(eb)
}

// number parses a JSON number exactly enough to order canonical integers
// of any width and doubles.
func number(v json.RawMessage) (*big.Float, bool) {
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return nil, false
	}
	f, ok := new(big.Float).SetPrec(2048).SetString(string(v))
	return f, ok
}
