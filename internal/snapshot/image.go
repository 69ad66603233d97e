package snapshot

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/dbtrail/dbtrail/internal/types"
)

// AppendImage appends one row given as a canonical JSON row image (see
// internal/types: {"col":value,...} with the columns in table order, as
// types.Image and the index store it). Each value is turned back into the SQL
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
func (tw *TableWriter) imageRow(image []byte) ([]types.Cell, error) {
	fields, err := types.DecodeImage(image)
	if err != nil {
		return nil, fmt.Errorf("table %s row %d: %w", tw.t.QualifiedName(), tw.fp.Rows+1, err)
	}
	if fields, err = tw.dropDerived(fields); err != nil {
		return nil, err
	}
	row := make([]types.Cell, len(fields))
	buf := make([]byte, 0, len(image))
	ends := make([]int, len(fields))
	for i, f := range fields {
		c := &tw.t.Columns[i]
		if !strings.EqualFold(f.Name, c.Name) {
			return nil, fmt.Errorf("table %s row %d: image column %d is %q, table has %q", tw.t.QualifiedName(), tw.fp.Rows+1, i+1, f.Name, c.Name)
		}
		raw := []byte(f.Raw)
		if string(raw) == "null" {
			ends[i] = -1
			continue
		}
		class, _ := types.ClassOf(c)
		numeric := class == types.ClassInteger || class == types.ClassYear || class == types.ClassFloat || class == types.ClassDouble
		var err error
		switch {
		case numeric && raw[0] != '"' && raw[0] != '{' && raw[0] != '[':
			buf = append(buf, raw...) // digits; AppendSQLValue refuses anything else
		case !numeric && raw[0] == '"':
			n := len(buf)
			buf, err = unescapeJSON(buf, raw[1:len(raw)-1])
			if err == nil && class == types.ClassBinary {
				var dec []byte
				dec, err = base64.StdEncoding.AppendDecode(nil, buf[n:])
				buf = append(buf[:n], dec...)
			}
		default:
			err = fmt.Errorf("JSON value of the wrong kind for a %s column", c.Type)
		}
		if err != nil {
			return nil, &RowError{Table: tw.t.QualifiedName(), Column: c.Name, Row: tw.fp.Rows + 1, Value: abbreviate(raw), Err: fmt.Errorf("malformed image value: %w", err)}
		}
		ends[i] = len(buf)
	}
	start := 0
	for i, end := range ends {
		if end < 0 {
			row[i] = types.NullCell()
			continue
		}
		row[i] = types.TextCell(buf[start:end:end])
		start = end
	}
	return row, nil
}

// dropDerived removes the fields of generated columns from an image's
// fields and checks that the rest are as many as the table's columns.
func (tw *TableWriter) dropDerived(fields []types.Field) ([]types.Field, error) {
	if len(fields) != len(tw.cols) && len(tw.t.Derived) > 0 {
		kept := fields[:0:0]
		for _, f := range fields {
			if !tw.t.IsDerived(f.Name) {
				kept = append(kept, f)
			}
		}
		fields = kept
	}
	if len(fields) != len(tw.cols) {
		return nil, fmt.Errorf("table %s row %d: image has %d columns, table has %d", tw.t.QualifiedName(), tw.fp.Rows+1, len(fields), len(tw.cols))
	}
	return fields, nil
}
