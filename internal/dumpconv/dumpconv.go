// Package dumpconv turns one table of a mydumper dump into a snapshot table
// file: the schema file gives the definition, every data file's rows pass
// through the statement parser into the Parquet writer. Literals are mapped
// to the SQL text form (what SELECT returns), which the writer converts with
// the one type mapping of internal/types. A value that cannot be converted
// fails the table with the file and line; nothing is published.
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
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/types"
)

// Definition reads the table's CREATE TABLE from its schema file and
// returns it with the definition a snapshot keeps of it
// (schema.Table.Stored: generated columns, which mydumper leaves out of its
// INSERTs, are not stored).
func Definition(fsys fs.FS, schemaName, table, schemaFile string) (*schema.Table, string, error) {
	f, err := fsys.Open(schemaFile)
	if err != nil {
		return nil, "", fmt.Errorf("open schema file %s: %w", schemaFile, err)
	}
	defer f.Close()
	stmt, err := dumpfile.ReadCreateTable(f)
	if err != nil {
		return nil, "", fmt.Errorf("schema file %s: %w", schemaFile, err)
	}
	cat := schema.NewCatalog()
	if _, err := schema.ApplyDDL(cat, schemaName, stmt); err != nil {
		return nil, "", fmt.Errorf("schema file %s: %w", schemaFile, err)
	}
	def, ok := cat.Get(schemaName, table)
	if !ok {
		return nil, "", fmt.Errorf("schema file %s does not create %s.%s", schemaFile, schemaName, table)
	}
	stored, err := def.Stored()
	if err != nil {
		return nil, "", fmt.Errorf("schema file %s: %w", schemaFile, err)
	}
	return stored, stmt, nil
}

// InputError is a row of a data file that does not fit its table: a
// column list or value count that differs from the table's, a value its
// column cannot hold. It is deterministic: converting the same dump again
// fails the same way. (Malformed statements are *dumpfile.SyntaxError and
// values the Parquet writer refuses *snapshot.RowError; both are as
// deterministic.)
type InputError struct {
	File  string
	Line  int
	Table string
	Err   error
}

func (e *InputError) Error() string {
	return fmt.Sprintf("%s:%d: table %s: %v", e.File, e.Line, e.Table, e.Err)
}

func (e *InputError) Unwrap() error { return e.Err }

// IsBadInput reports whether err is one of the deterministic errors of a
// conversion (*InputError, *dumpfile.SyntaxError, *snapshot.RowError),
// which no retry can cure.
func IsBadInput(err error) bool {
	var in *InputError
	var syn *dumpfile.SyntaxError
	var row *snapshot.RowError
	return errors.As(err, &in) || errors.As(err, &syn) || errors.As(err, &row)
}

// Progress is called every progressRows rows and after each data file, with
// the index of the data file and the rows written so far.
type Progress func(file int, rows int64)

const progressRows = 1 << 17 // a multiple of the 4096-row check interval

// Convert appends every row of the table's data files, in order, to tw.
func Convert(ctx context.Context, fsys fs.FS, dataFiles []string, def *schema.Table, tw Sink, progress Progress) error {
	c := newConverter(def)
	if progress == nil {
		progress = func(int, int64) {}
	}
	var rows int64
	for i, name := range dataFiles {
		n, err := c.file(ctx, fsys, name, tw, func(n int64) { progress(i, rows+n) })
		rows += n
		if err != nil {
			return err
		}
		progress(i, rows)
	}
	return nil
}

type converter struct {
	def  *schema.Table
	vals []types.Cell
	bufs [][]byte
	cols []int // row value i → column cols[i]
}

func newConverter(def *schema.Table) *converter {
	n := len(def.Columns)
	return &converter{def: def, vals: make([]types.Cell, n), bufs: make([][]byte, n)}
}

func (c *converter) file(ctx context.Context, fsys fs.FS, name string, tw Sink, progress func(int64)) (int64, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return 0, fmt.Errorf("open data file %s: %w", name, err)
	}
	defer f.Close()
	r := dumpfile.NewReader(f, name)
	var n int64
	for {
		if n%4096 == 0 {
			if ctx.Err() != nil {
				return n, ctx.Err()
			}
			if n > 0 && n%progressRows == 0 {
				progress(n)
			}
		}
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if err := c.row(row); err != nil {
			return n, &InputError{File: name, Line: row.Line, Table: c.def.QualifiedName(), Err: err}
		}
		if err := tw.AppendSQL(c.vals); err != nil {
			return n, fmt.Errorf("%s:%d: %w", name, row.Line, err)
		}
		n++
	}
}

// row maps one parsed row to the SQL text form of each column.
func (c *converter) row(row dumpfile.Row) error {
	if err := c.mapColumns(row); err != nil {
		return err
	}
	for i, v := range row.Values {
		col := &c.def.Columns[c.cols[i]]
		val, err := c.value(c.cols[i], col, v)
		if err != nil {
			return fmt.Errorf("column %s: %w", col.Name, err)
		}
		c.vals[c.cols[i]] = val
	}
	return nil
}

// mapColumns matches the row's values to columns: by the statement's column
// list when it has one, else by position. Every column must get a value.
func (c *converter) mapColumns(row dumpfile.Row) error {
	if row.Columns == nil {
		if len(row.Values) != len(c.def.Columns) {
			return fmt.Errorf("row has %d values, the table has %d columns", len(row.Values), len(c.def.Columns))
		}
		if len(c.cols) != len(row.Values) {
			c.cols = make([]int, len(row.Values))
			for i := range c.cols {
				c.cols[i] = i
			}
		}
		return nil
	}
	if len(row.Columns) != len(c.def.Columns) {
		return fmt.Errorf("INSERT lists %d columns, the table stores %d (%s)", len(row.Columns), len(c.def.Columns), strings.Join(c.def.ColumnNames(), ", "))
	}
	c.cols = c.cols[:0]
	seen := make([]bool, len(c.def.Columns))
	for _, name := range row.Columns {
		j := c.def.ColumnIndex(name)
		if j < 0 && c.def.IsDerived(name) {
			return fmt.Errorf("INSERT gives a value to the generated column %q", name)
		}
		if j < 0 || seen[j] {
			return fmt.Errorf("INSERT column %q is not a column of the table (or is listed twice)", name)
		}
		seen[j] = true
		c.cols = append(c.cols, j)
	}
	return nil
}

// value returns the SQL text form of one literal for column col. NULL is
// told by the literal's kind alone: an empty literal is an empty value.
func (c *converter) value(i int, col *schema.Column, v dumpfile.Value) (types.Cell, error) {
	if v.Kind == dumpfile.KindNull {
		return types.NullCell(), nil
	}
	switch {
	case types.IsCharacter(col):
		var err error
		c.bufs[i], err = types.ToUTF8(c.bufs[i][:0], col, v.Raw)
		return types.TextCell(c.bufs[i]), err
	case col.Type == "bit" && v.Kind == dumpfile.KindNumber:
		// A BIT written as a number: its big-endian bytes.
		n, err := strconv.ParseUint(string(v.Raw), 10, 64)
		if err != nil {
			return types.Cell{}, fmt.Errorf("BIT value %q: %w", v.Raw, err)
		}
		w := (col.Length + 7) / 8
		b := c.bufs[i][:0]
		for k := w - 1; k >= 0; k-- {
			b = append(b, byte(n>>(8*k)))
		}
		c.bufs[i] = b
		return types.TextCell(b), nil
	}
	return types.TextCell(v.Raw), nil
}
