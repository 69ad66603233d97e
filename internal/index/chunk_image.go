package index

import (
	"errors"
	"fmt"

	"github.com/dbtrail/dbtrail/internal/rowimage"
)

// Images are stored as JSON arrays of their values in column order (see
// chunk.go); the chunk row's column_names holds the names once, as a JSON
// array of strings. These functions move between the two forms without
// re-encoding a value: names and values are copied as the JSON text they are.

// splitImage appends the values of the object image img to vals as a JSON
// array, and its keys to names as a JSON array of strings. It returns both
// grown slices.
func splitImage(vals, names, img []byte) ([]byte, []byte, error) {
	if !enclosed(img, '{', '}') {
		return nil, nil, errors.New("an image is not a JSON object")
	}
	vals = append(vals, '[')
	names = append(names, '[')
	for i, first := 1, true; i < len(img)-1; first = false {
		if !first {
			if img[i] != ',' {
				return nil, nil, fmt.Errorf("image byte %d: want , between fields", i)
			}
			i++
			vals = append(vals, ',')
			names = append(names, ',')
		}
		if i >= len(img) || img[i] != '"' {
			return nil, nil, fmt.Errorf("image byte %d: want a field name", i)
		}
		end, err := skipString(img, i)
		if err != nil || end >= len(img) || img[end] != ':' {
			return nil, nil, fmt.Errorf("image byte %d: malformed field name", i)
		}
		names = append(names, img[i:end]...)
		vEnd, err := skipValue(img, end+1)
		if err != nil {
			return nil, nil, fmt.Errorf("image byte %d: %w", end+1, err)
		}
		vals = append(vals, img[end+1:vEnd]...)
		i = vEnd
	}
	return append(vals, ']'), append(names, ']'), nil
}

// columnNames is a chunk's column_names, parsed: each name as its JSON
// string token, quotes included.
type columnNames [][]byte

// parseColumnNames reads the JSON array of strings text (as splitImage
// writes it). The tokens alias text.
func parseColumnNames(text []byte) (columnNames, error) {
	names, err := arrayValues(nil, text)
	if err != nil {
		return nil, fmt.Errorf("column names: %w", err)
	}
	for i, n := range names {
		if n[0] != '"' {
			return nil, fmt.Errorf("column name %d is not a JSON string: %s", i, n)
		}
	}
	return names, nil
}

// unchanged is what an update's stored after image holds in place of a
// value equal to its before image's (rowimage.Unchanged).
const unchanged = rowimage.Unchanged

// arrayValues returns the JSON text of each value of the array vals.
func arrayValues(out [][]byte, vals []byte) ([][]byte, error) {
	if !enclosed(vals, '[', ']') {
		return nil, errors.New("stored image is not a JSON array")
	}
	for i := 1; i < len(vals)-1; {
		if len(out) > 0 {
			if vals[i] != ',' {
				return nil, fmt.Errorf("stored image byte %d: want ,", i)
			}
			i++
		}
		end, err := skipValue(vals, i)
		if err != nil {
			return nil, fmt.Errorf("stored image byte %d: %w", i, err)
		}
		out = append(out, vals[i:end])
		i = end
	}
	return out, nil
}

// deltaImage appends to dst the stored form of an update's after image a
// (a value array) given its before image b (a value array of the same
// columns): each value equal to b's and longer than the marker is replaced
// by the marker. The result is never longer than a. scratch keeps the value
// lists' storage between calls.
func deltaImage(dst, b, a []byte, scratch *[2][][]byte) ([]byte, error) {
	bv, err := arrayValues(scratch[0][:0], b)
	if err != nil {
		return nil, fmt.Errorf("before image: %w", err)
	}
	av, err := arrayValues(scratch[1][:0], a)
	if err != nil {
		return nil, fmt.Errorf("after image: %w", err)
	}
	scratch[0], scratch[1] = bv, av
	if len(av) != len(bv) {
		return nil, fmt.Errorf("before image has %d values, after image %d", len(bv), len(av))
	}
	dst = append(dst, '[')
	for i, v := range av {
		if i > 0 {
			dst = append(dst, ',')
		}
		if len(v) > len(unchanged) && string(v) == string(bv[i]) {
			v = []byte(unchanged)
		}
		dst = append(dst, v...)
	}
	return append(dst, ']'), nil
}

// joinImage appends the object image of the stored values vs (arrayValues
// of a value array), keyed by names, to dst. base, when not nil, is the
// values of the update's before image: a marker in vs stands for base's
// value. A count of values other than len(names) is an error.
func joinImage(dst []byte, names columnNames, vs, base [][]byte) ([]byte, error) {
	if len(vs) != len(names) {
		return nil, fmt.Errorf("stored image has %d values for the chunk's %d columns", len(vs), len(names))
	}
	if base != nil && len(base) != len(names) {
		return nil, fmt.Errorf("stored before image has %d values for the chunk's %d columns", len(base), len(names))
	}
	dst = append(dst, '{')
	for i, v := range vs {
		if i > 0 {
			dst = append(dst, ',')
		}
		if string(v) == unchanged {
			if base == nil {
				return nil, fmt.Errorf("stored image value %d is unchanged but there is no before image", i)
			}
			v = base[i]
		}
		dst = append(dst, names[i]...)
		dst = append(dst, ':')
		dst = append(dst, v...)
	}
	return append(dst, '}'), nil
}
