package snapshot

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// AppendImage appends one row given as a canonical JSON row image (see
// internal/rowimage: {"col":value,...} with the columns in table order, as
// rowimage.Image and the index store it). Each value is turned back into the SQL
// text form (numbers as their digits, JSON strings as their text, base64 of
// binary columns as the bytes, null as NULL) and appended with AppendSQL, so
// an image and the SELECT of the same row give the same Parquet values and
// the same RowHash. Column names are matched to the table's in order,
// case-insensitively; a missing, extra or misplaced column is an error,
// except that the values of the table's generated columns (Table.Derived),
// which images carry and table files do not, are skipped.
func (tw *TableWriter) AppendImage(image []byte) error {
	row, err := tw.imageRow(image)
	if err != nil {
		return err
	}
	return tw.AppendSQL(row)
}

// imageRow turns a canonical JSON image into AppendSQL's form.
func (tw *TableWriter) imageRow(image []byte) ([]rowimage.Cell, error) {
	var d imageDecoder
	return d.decode(tw.t, tw.fp.Rows+1, image)
}

// imageDecoder turns canonical JSON images of a table into AppendSQL's
// form, reusing its buffers from one image to the next: a row it returns
// is valid until the next decode.
type imageDecoder struct {
	row  []rowimage.Cell
	buf  []byte
	ends []int
}

// decode decodes image, row n of t's file (for errors). The image's
// columns are matched to t's in order, case-insensitively; a missing,
// extra or misplaced column is an error, except the values of t's
// generated columns (Table.Derived), which are skipped.
func (d *imageDecoder) decode(t *schema.Table, n int64, image []byte) ([]rowimage.Cell, error) {
	fields, err := rowimage.DecodeImage(image)
	if err != nil {
		return nil, fmt.Errorf("table %s row %d: %w", t.QualifiedName(), n, err)
	}
	if fields, err = dropDerived(t, n, fields); err != nil {
		return nil, err
	}
	d.row = slices.Grow(d.row[:0], len(fields))[:len(fields)]
	d.ends = slices.Grow(d.ends[:0], len(fields))[:len(fields)]
	buf := slices.Grow(d.buf[:0], len(image))
	row, ends := d.row, d.ends
	for i, f := range fields {
		c := &t.Columns[i]
		if !strings.EqualFold(f.Name, c.Name) {
			return nil, fmt.Errorf("table %s row %d: image column %d is %q, table has %q", t.QualifiedName(), n, i+1, f.Name, c.Name)
		}
		raw := []byte(f.Raw)
		if string(raw) == "null" {
			ends[i] = -1
			continue
		}
		class, _ := rowimage.ClassOf(c)
		numeric := class == rowimage.ClassInteger || class == rowimage.ClassYear || class == rowimage.ClassFloat || class == rowimage.ClassDouble
		var err error
		switch {
		case numeric && raw[0] != '"' && raw[0] != '{' && raw[0] != '[':
			buf = append(buf, raw...) // digits; AppendSQLValue refuses anything else
		case !numeric && raw[0] == '"':
			n := len(buf)
			buf, err = unescapeJSON(buf, raw[1:len(raw)-1])
			if err == nil && class == rowimage.ClassBinary {
				var dec []byte
				dec, err = base64.StdEncoding.AppendDecode(nil, buf[n:])
				buf = append(buf[:n], dec...)
			}
		default:
			err = fmt.Errorf("JSON value of the wrong kind for a %s column", c.Type)
		}
		if err != nil {
			return nil, &RowError{Table: t.QualifiedName(), Column: c.Name, Row: n, Value: abbreviate(raw), Err: fmt.Errorf("malformed image value: %w", err)}
		}
		ends[i] = len(buf)
	}
	start := 0
	for i, end := range ends {
		if end < 0 {
			row[i] = rowimage.NullCell()
			continue
		}
		row[i] = rowimage.TextCell(buf[start:end:end])
		start = end
	}
	d.buf = buf
	return row, nil
}

// dropDerived removes the fields of t's generated columns from an image's
// fields and checks that the rest are as many as t's columns.
func dropDerived(t *schema.Table, n int64, fields []rowimage.Field) ([]rowimage.Field, error) {
	if len(fields) != len(t.Columns) && len(t.Derived) > 0 {
		kept := fields[:0:0]
		for _, f := range fields {
			if !t.IsDerived(f.Name) {
				kept = append(kept, f)
			}
		}
		fields = kept
	}
	if len(fields) != len(t.Columns) {
		return nil, fmt.Errorf("table %s row %d: image has %d columns, table has %d", t.QualifiedName(), n, len(fields), len(t.Columns))
	}
	return fields, nil
}
