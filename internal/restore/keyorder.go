package restore

import (
	"bytes"
	"strconv"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// KeyOrder orders rows by a table's key: the order a restore loads a
// table in. Integer, DECIMAL, FLOAT and DOUBLE key columns compare by
// value (the server's order); every other type by the bytes of its SQL
// text form, which is the server's order for binary strings, dates and
// times without a sign, and a fixed, documented order for text under
// other collations. NULL sorts first. Two keys compare equal only when
// their texts are equal, so the order is total and the same on every
// worker.
type KeyOrder struct {
	idx  []int
	kind []byte
}

// Kinds of key comparison.
const (
	cmpBytes   = 'b'
	cmpInt     = 'i'
	cmpDecimal = 'd'
	cmpFloat   = 'f'
)

// NewKeyOrder is the order of t's key (nil for a table without one:
// KeyRow tables load in file order).
func NewKeyOrder(t *schema.Table) (*KeyOrder, error) {
	if len(t.Key) == 0 || t.KeyKind == schema.KeyRow {
		return nil, nil
	}
	idx, err := t.KeyIndexes()
	if err != nil {
		return nil, err
	}
	o := &KeyOrder{idx: idx, kind: make([]byte, len(idx))}
	for i, j := range idx {
		switch t.Columns[j].Type {
		case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year":
			o.kind[i] = cmpInt
		case "decimal", "numeric":
			o.kind[i] = cmpDecimal
		case "float", "double", "real":
			o.kind[i] = cmpFloat
		default:
			o.kind[i] = cmpBytes
		}
	}
	return o, nil
}

// Indexes are the key columns' positions in a row.
func (o *KeyOrder) Indexes() []int { return o.idx }

// Compare orders rows a and b (full rows, in table order) by the key:
// -1, 0 or +1.
func (o *KeyOrder) Compare(a, b []rowimage.Cell) int {
	for i, j := range o.idx {
		if c := compareCell(o.kind[i], a[j], b[j]); c != 0 {
			return c
		}
	}
	return 0
}

// Key copies row's key cells (the rest nil), for a later Compare.
func (o *KeyOrder) Key(dst, row []rowimage.Cell) []rowimage.Cell {
	if cap(dst) < len(row) {
		dst = make([]rowimage.Cell, len(row))
	}
	dst = dst[:len(row)]
	for _, j := range o.idx {
		dst[j] = rowimage.Cell{Null: row[j].Null, Text: append(dst[j].Text[:0], row[j].Text...)}
	}
	return dst
}

func compareCell(kind byte, a, b rowimage.Cell) int {
	switch {
	case a.Null && b.Null:
		return 0
	case a.Null:
		return -1
	case b.Null:
		return 1
	}
	var c int
	switch kind {
	case cmpInt, cmpDecimal:
		c = compareNumber(a.Text, b.Text)
	case cmpFloat:
		c = compareFloat(a.Text, b.Text)
	}
	if c != 0 {
		return c
	}
	return bytes.Compare(a.Text, b.Text)
}

// compareNumber compares two decimal numbers in plain text ("-12.50"):
// sign, then integer digits (length, then bytes), then fraction digits.
// A text it cannot read compares equal (the byte order decides).
func compareNumber(a, b []byte) int {
	na, nb := len(a) > 0 && a[0] == '-', len(b) > 0 && b[0] == '-'
	if na != nb {
		if na {
			return -1
		}
		return 1
	}
	if na {
		a, b = a[1:], b[1:]
	}
	ia, fa := splitPoint(a)
	ib, fb := splitPoint(b)
	ia, ib = bytes.TrimLeft(ia, "0"), bytes.TrimLeft(ib, "0")
	c := 0
	switch {
	case len(ia) != len(ib):
		c = -1
		if len(ia) > len(ib) {
			c = 1
		}
	default:
		if c = bytes.Compare(ia, ib); c == 0 {
			c = bytes.Compare(bytes.TrimRight(fa, "0"), bytes.TrimRight(fb, "0"))
		}
	}
	if na {
		return -c
	}
	return c
}

func splitPoint(s []byte) (intPart, frac []byte) {
	if i := bytes.IndexByte(s, '.'); i >= 0 {
		return s[:i], s[i+1:]
	}
	return s, nil
}

func compareFloat(a, b []byte) int {
	fa, errA := strconv.ParseFloat(string(a), 64)
	fb, errB := strconv.ParseFloat(string(b), 64)
	switch {
	case errA != nil || errB != nil || fa == fb:
		return 0
	case fa < fb:
		return -1
	}
	return 1
}
