package dumpconv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/dbtrail/dbtrail/internal/dumpfile"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// converter maps the parsed rows of one table's data files to the SQL text
// form of each column, appending the values to a batch.
type converter struct {
	def  *schema.Table
	cols []int  // row value i → column cols[i]
	seen []bool // mapColumns' scratch
	utf8 []bool // column j is character data already in UTF-8: kept as is
}

func newConverter(def *schema.Table) *converter {
	n := len(def.Columns)
	c := &converter{def: def, seen: make([]bool, n), utf8: make([]bool, n)}
	for j := range def.Columns {
		col := &def.Columns[j]
		switch col.Charset {
		case "utf8mb4", "utf8mb3", "utf8", "ascii", "":
			// The table writer validates UTF-8 as it canonicalises the
			// value; validating here too would be a second pass.
			c.utf8[j] = rowimage.IsCharacter(col)
		}
	}
	return c
}

// file reads the data file name and sends its rows through p, in batches.
// A read or conversion error is sent after the rows before it. It reports
// whether the next file is wanted: false after an error or once the caller
// has returned.
func (c *converter) file(fsys fs.FS, index int, name string, b *batchPipe) bool {
	fail := func(bt *batch, err error) bool {
		bt.err = err
		b.put(bt, true)
		return false
	}
	bt, ok := b.get()
	if !ok {
		return false
	}
	bt.file, bt.name = index, name
	f, err := fsys.Open(name)
	if err != nil {
		return fail(bt, fmt.Errorf("open data file %s: %w", name, err))
	}
	defer f.Close()
	r := dumpfile.NewReader(f, name)
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return b.put(bt, true)
		}
		if err != nil {
			return fail(bt, err)
		}
		if err := c.row(bt, row); err != nil {
			return fail(bt, &InputError{File: name, Line: row.Line, Table: c.def.QualifiedName(), Err: err})
		}
		if bt.full() {
			if !b.put(bt, false) {
				return false
			}
			if bt, ok = b.get(); !ok {
				return false
			}
			bt.file, bt.name = index, name
		}
	}
}

// row appends one parsed row to bt in the SQL text form of each column,
// or appends nothing and returns the error of its first bad value.
func (c *converter) row(bt *batch, row dumpfile.Row) error {
	if err := c.mapColumns(row); err != nil {
		return err
	}
	at, data := len(bt.cells), len(bt.data)
	bt.cells = append(bt.cells, make([]cellRef, len(c.def.Columns))...)
	cells := bt.cells[at:]
	for i, v := range row.Values {
		j := c.cols[i]
		start := len(bt.data)
		var err error
		if bt.data, err = c.value(bt.data, j, v); err != nil {
			bt.cells, bt.data = bt.cells[:at], bt.data[:data]
			return fmt.Errorf("column %s: %w", c.def.Columns[j].Name, err)
		}
		cells[j] = cellRef{start: start, end: len(bt.data), null: v.Kind == dumpfile.KindNull}
	}
	bt.lines = append(bt.lines, row.Line)
	return nil
}

// mapColumns matches the row's values to columns: by the statement's column
// list when it has one, else by position. Every column must get a value.
func (c *converter) mapColumns(row dumpfile.Row) error {
	if row.Columns == nil {
		if len(row.Values) != len(c.def.Columns) {
			return fmt.Errorf("row has %d values, the table has %d columns", len(row.Values), len(c.def.Columns))
		}
		if len(c.cols) != len(row.Values) || !identity(c.cols) {
			c.cols = c.cols[:0]
			for i := range row.Values {
				c.cols = append(c.cols, i)
			}
		}
		return nil
	}
	if len(row.Columns) != len(c.def.Columns) {
		return fmt.Errorf("INSERT lists %d columns, the table stores %d (%s)", len(row.Columns), len(c.def.Columns), strings.Join(c.def.ColumnNames(), ", "))
	}
	c.cols = c.cols[:0]
	clear(c.seen)
	for _, name := range row.Columns {
		j := c.def.ColumnIndex(name)
		if j < 0 && c.def.IsDerived(name) {
			return fmt.Errorf("INSERT gives a value to the generated column %q", name)
		}
		if j < 0 || c.seen[j] {
			return fmt.Errorf("INSERT column %q is not a column of the table (or is listed twice)", name)
		}
		c.seen[j] = true
		c.cols = append(c.cols, j)
	}
	return nil
}

func identity(cols []int) bool {
	for i, j := range cols {
		if i != j {
			return false
		}
	}
	return true
}

// value appends the SQL text form of one literal for column j to dst. NULL
// is told by the literal's kind alone (the caller marks it): an empty
// literal is an empty value.
func (c *converter) value(dst []byte, j int, v dumpfile.Value) ([]byte, error) {
	if v.Kind == dumpfile.KindNull {
		return dst, nil
	}
	col := &c.def.Columns[j]
	switch {
	case c.utf8[j]:
		return append(dst, v.Raw...), nil
	case rowimage.IsCharacter(col):
		return rowimage.ToUTF8(dst, col, v.Raw)
	case col.Type == "bit" && v.Kind == dumpfile.KindNumber:
		// A BIT written as a number: its big-endian bytes.
		n, err := strconv.ParseUint(string(v.Raw), 10, 64)
		if err != nil {
			return dst, fmt.Errorf("BIT value %q: %w", v.Raw, err)
		}
		for k := (col.Length+7)/8 - 1; k >= 0; k-- {
			dst = append(dst, byte(n>>(8*k)))
		}
		return dst, nil
	}
	return append(dst, v.Raw...), nil
}

// appendRows appends the rows of bt to tw, in order, and counts them in
// *rows, reporting progress every progressRows rows. A row the sink
// refuses fails with its file and line.
func appendRows(ctx context.Context, bt *batch, tw Sink, row []rowimage.Cell, rows *int64, progress Progress) error {
	n := len(row)
	for k, line := range bt.lines {
		for j, ref := range bt.cells[k*n : (k+1)*n] {
			row[j] = rowimage.Cell{Text: bt.data[ref.start:ref.end:ref.end], Null: ref.null}
		}
		if err := tw.AppendSQL(row); err != nil {
			return fmt.Errorf("%s:%d: %w", bt.name, line, err)
		}
		*rows++
		if *rows%progressRows == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			progress(bt.file, *rows)
		}
	}
	return nil
}
