package rowimage

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// Image encodes a whole row as go-mysql gives it (one entry per column, in
// table order) into {"col":value,...} with the keys in table column order and
// the values in canonical form (see AppendValue). Errors are *ValueError
// naming table, column, type and reason, or a row-shape error naming the
// table.
func Image(t *schema.Table, row []any) ([]byte, error) {
	return AppendImage(make([]byte, 0, 24*len(t.Columns)+2), t, row)
}

// AppendImage is Image appending to dst, for callers that reuse a buffer. On
// error the returned slice is nil.
func AppendImage(dst []byte, t *schema.Table, row []any) ([]byte, error) {
	return appendRow(dst, t, row, AppendValue)
}

// SQLImage is Image for a row in the SQL text form (one Cell per column),
// converted with AppendSQLValue.
func SQLImage(t *schema.Table, row []Cell) ([]byte, error) {
	return appendRow(make([]byte, 0, 24*len(t.Columns)+2), t, row, AppendSQLValue)
}

// AppendValues is AppendImage without the names: [value,...] in column
// order, the form the index stores images in (names once per chunk, from
// ColumnList).
func AppendValues(dst []byte, t *schema.Table, row []any) ([]byte, error) {
	return appendValues(dst, t, row, nil)
}

// Unchanged is what the index stores in an update's after image in place of
// a value equal to its before image's (see AppendValuesDelta): canonical
// values are never JSON objects, so the empty object cannot be one.
const Unchanged = "{}"

// AppendValuesDelta is AppendValues for an update's after image row whose
// before image is base (same columns): a value equal to base's whose
// canonical text is longer than Unchanged is written as Unchanged.
func AppendValuesDelta(dst []byte, t *schema.Table, row, base []any) ([]byte, error) {
	if len(base) != len(t.Columns) {
		return nil, fmt.Errorf("table %s: before row has %d values for %d columns", t.QualifiedName(), len(base), len(t.Columns))
	}
	return appendValues(dst, t, row, base)
}

// appendValues writes [value,...]; base, when not nil, turns values equal
// to its own into Unchanged.
func appendValues(dst []byte, t *schema.Table, row, base []any) ([]byte, error) {
	if len(row) != len(t.Columns) {
		return nil, fmt.Errorf("table %s: row has %d values for %d columns", t.QualifiedName(), len(row), len(t.Columns))
	}
	dst = append(dst, '[')
	for i := range t.Columns {
		if i > 0 {
			dst = append(dst, ',')
		}
		start := len(dst)
		var err error
		if dst, err = AppendValue(dst, &t.Columns[i], row[i]); err != nil {
			return nil, withTable(t, err)
		}
		if base != nil && len(dst)-start > len(Unchanged) && sameValue(row[i], base[i]) {
			dst = append(dst[:start], Unchanged...)
		}
	}
	return append(dst, ']'), nil
}

// sameValue reports whether two decoded binlog values are certainly equal;
// false when it cannot tell cheaply (then the value is stored whole).
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint, float32, float64, bool:
		return a == b
	}
	return false
}

// ColumnList is the JSON array of t's column names, each encoded as image
// keys are.
func ColumnList(t *schema.Table) ([]byte, error) {
	dst := []byte{'['}
	for i := range t.Columns {
		var err error
		if dst, err = appendName(dst, t, &t.Columns[i], i); err != nil {
			return nil, err
		}
		dst = dst[:len(dst)-1] // appendName's ':'
	}
	return append(dst, ']'), nil
}

// appendRow writes {"col":value,...} in column order, each value converted by
// value: the one loop behind Image (binlog values) and SQLImage (SELECT text).
func appendRow[V any](dst []byte, t *schema.Table, row []V, value func([]byte, *schema.Column, V) ([]byte, error)) ([]byte, error) {
	if len(row) != len(t.Columns) {
		return nil, fmt.Errorf("table %s: row has %d values for %d columns", t.QualifiedName(), len(row), len(t.Columns))
	}
	dst = append(dst, '{')
	for i := range t.Columns {
		c := &t.Columns[i]
		var err error
		if dst, err = appendName(dst, t, c, i); err != nil {
			return nil, err
		}
		if dst, err = value(dst, c, row[i]); err != nil {
			return nil, withTable(t, err)
		}
	}
	return append(dst, '}'), nil
}

// appendName writes the separator, the column name as a JSON string and ':'.
func appendName(dst []byte, t *schema.Table, c *schema.Column, i int) ([]byte, error) {
	if i > 0 {
		dst = append(dst, ',')
	}
	dst, ok := appendValidJSONString(dst, strBytes(c.Name))
	if !ok {
		return nil, &ValueError{Table: t.QualifiedName(), Column: c.Name, Type: c.Type, Err: errors.New("column name is not UTF-8")}
	}
	return append(dst, ':'), nil
}

// withTable adds the table name to a *ValueError.
func withTable(t *schema.Table, err error) error {
	var ve *ValueError
	if errors.As(err, &ve) {
		cp := *ve
		cp.Table = t.QualifiedName()
		return &cp
	}
	return fmt.Errorf("table %s: %w", t.QualifiedName(), err)
}

// keyColumn returns the position of the n-th key column. A KeyRow table with
// an empty Key uses every column; keyLen gives the count.
func keyColumn(t *schema.Table, n int) (int, error) {
	if len(t.Key) == 0 {
		return n, nil
	}
	j := t.ColumnIndex(t.Key[n])
	if j < 0 {
		return 0, fmt.Errorf("table %s: key column %q is not a column", t.QualifiedName(), t.Key[n])
	}
	return j, nil
}

func keyLen(t *schema.Table) (int, error) {
	if len(t.Key) > 0 {
		return len(t.Key), nil
	}
	if t.KeyKind != schema.KeyRow {
		return 0, fmt.Errorf("table %s: no key columns", t.QualifiedName())
	}
	return len(t.Columns), nil
}

// Key returns the row's key as one canonical string: a JSON array of the
// canonical values of the t.Key columns in key order, e.g. `[42]` or
// `[7,"abc"]`. A NULL key column is an error unless the table's KeyKind is
// KeyRow (then it is null). A KeyRow table with an empty Key uses every
// column. row is as for Image.
func Key(t *schema.Table, row []any) (string, error) {
	if len(row) != len(t.Columns) {
		return "", fmt.Errorf("table %s: row has %d values for %d columns", t.QualifiedName(), len(row), len(t.Columns))
	}
	return appendKey(t, func(dst []byte, j int) ([]byte, bool, error) {
		if row[j] == nil {
			return dst, true, nil
		}
		out, err := AppendValue(dst, &t.Columns[j], row[j])
		return out, false, err
	})
}

// KeyOfValues is Key for a row given as the canonical value texts that
// AppendValues writes: value(j) is column j's ("null" for NULL), for j
// below len(t.Columns).
func KeyOfValues(t *schema.Table, value func(j int) []byte) (string, error) {
	return appendKey(t, valueText(value))
}

// KeyColumns is the positions in t.Columns of t's key columns, in key
// order, for KeyOfValuesAt: an error when t has no key columns or names
// one it does not have.
func KeyColumns(t *schema.Table) ([]int, error) {
	return appendKeyColumns(nil, t)
}

// appendKeyColumns appends KeyColumns(t) to dst.
func appendKeyColumns(dst []int, t *schema.Table) ([]int, error) {
	nk, err := keyLen(t)
	if err != nil {
		return nil, err
	}
	for n := range nk {
		j, err := keyColumn(t, n)
		if err != nil {
			return nil, err
		}
		dst = append(dst, j)
	}
	return dst, nil
}

// KeyOfValuesAt is KeyOfValues with t's key columns given, as KeyColumns
// returns them: capture looks them up once per table version, not for
// every row.
func KeyOfValuesAt(t *schema.Table, cols []int, value func(j int) []byte) (string, error) {
	return appendKeyAt(t, cols, valueText(value))
}

// valueText is appendKey's value function for a row given as canonical
// value texts ("null": NULL).
func valueText(value func(j int) []byte) func(dst []byte, j int) ([]byte, bool, error) {
	return func(dst []byte, j int) ([]byte, bool, error) {
		v := value(j)
		if string(v) == "null" {
			return dst, true, nil
		}
		return append(dst, v...), false, nil
	}
}

// appendKey is the key of a row whose column j value appends (null: the
// value is NULL, nothing appended).
func appendKey(t *schema.Table, value func(dst []byte, j int) (out []byte, null bool, err error)) (string, error) {
	var arr [16]int
	cols, err := appendKeyColumns(arr[:0], t)
	if err != nil {
		return "", err
	}
	return appendKeyAt(t, cols, value)
}

// appendKeyAt is appendKey with t's key columns given (KeyColumns).
func appendKeyAt(t *schema.Table, cols []int, value func(dst []byte, j int) (out []byte, null bool, err error)) (string, error) {
	var buf [128]byte
	b := append(buf[:0], '[')
	for n, j := range cols {
		c := &t.Columns[j]
		if n > 0 {
			b = append(b, ',')
		}
		var null bool
		var err error
		if b, null, err = value(b, j); err != nil {
			return "", withTable(t, err)
		}
		if null {
			if t.KeyKind != schema.KeyRow {
				return "", &ValueError{Table: t.QualifiedName(), Column: c.Name, Type: c.Type, Err: errors.New("key column is NULL")}
			}
			b = append(b, "null"...)
		}
	}
	return string(append(b, ']')), nil
}

// KeyFromImage extracts from an encoded image the same key string Key returns
// for the row it encodes. Image keys are matched to t.Key case-insensitively,
// as MySQL compares column names.
func KeyFromImage(t *schema.Table, image []byte) (string, error) {
	fields, err := DecodeImage(image)
	if err != nil {
		return "", fmt.Errorf("table %s: %w", t.QualifiedName(), err)
	}
	names := t.Key
	if len(names) == 0 {
		if t.KeyKind != schema.KeyRow {
			return "", fmt.Errorf("table %s: no key columns", t.QualifiedName())
		}
		names = t.ColumnNames()
	}
	var b strings.Builder
	b.WriteByte('[')
	for n, name := range names {
		f := -1
		for i := range fields {
			if strings.EqualFold(fields[i].Name, name) {
				f = i
				break
			}
		}
		if f < 0 {
			return "", fmt.Errorf("table %s: image has no key column %q", t.QualifiedName(), name)
		}
		raw := fields[f].Raw
		if string(raw) == "null" && t.KeyKind != schema.KeyRow {
			return "", fmt.Errorf("table %s: key column %q is NULL in image", t.QualifiedName(), name)
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(raw)
	}
	b.WriteByte(']')
	return b.String(), nil
}
