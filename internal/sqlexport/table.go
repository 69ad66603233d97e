package sqlexport

import (
	"fmt"
	"strings"

	"github.com/dbtrail/dbtrail/internal/rowimage"
)

// table writes DROP TABLE, the stored CREATE TABLE and the rows of src as
// INSERT statements of at most e.max bytes (see the package comment).
func (e *exporter) table(src tableRows) error {
	t := src.footer.Table
	name := t.QualifiedName()
	create := strings.TrimRight(strings.TrimSpace(src.footer.CreateTable), "; \t\r\n")
	if create == "" {
		return fmt.Errorf("table %s: the table file's footer holds no CREATE TABLE", name)
	}
	rows, err := NewRows(t)
	if err != nil {
		return err
	}
	e.printf("\n-- table %s: %s\n", comment(name), src.note)
	e.printf("DROP TABLE IF EXISTS %s;\n%s;\n", quoteIdent(t.Name), create)
	prefix := "INSERT INTO " + quoteIdent(t.Name) + " (" + strings.Join(rows.cols, ",") + ") VALUES "
	e.stmt = e.stmt[:0]
	var n int64
	var rowErr error // fn's error, already naming the table and row
	err = src.each(func(row []rowimage.Cell) error {
		n++
		rowErr = e.insertRow(rows, prefix, n, row)
		return rowErr
	})
	if rowErr != nil {
		return rowErr
	}
	if err != nil {
		return fmt.Errorf("table %s after row %d: %w", name, n, err)
	}
	e.flushInsert()
	e.stats.Tables++
	e.stats.Rows += n
	return e.cw.err
}

// insertRow renders row n (1-based) with rows and adds it to the INSERT
// being built (starting with prefix), first writing that statement when
// the row would take it over e.max.
func (e *exporter) insertRow(rows *Rows, prefix string, n int64, row []rowimage.Cell) error {
	var err error
	if e.row, err = rows.AppendTuple(e.row[:0], n, row); err != nil {
		return err
	}
	// A row joins the statement when the statement stays within max with
	// the row, its ',' and the closing ';'.
	if len(e.stmt) > 0 && len(e.stmt)+1+len(e.row)+1 > e.max {
		e.flushInsert()
	}
	if len(e.stmt) == 0 {
		e.stmt = append(e.stmt, prefix...)
	} else {
		e.stmt = append(e.stmt, ',')
	}
	e.stmt = append(e.stmt, e.row...)
	if e.cw.err != nil {
		return fmt.Errorf("table %s row %d: %w", rows.t.QualifiedName(), n, e.cw.err)
	}
	return nil
}

// flushInsert writes the statement being built, if any, as one line.
func (e *exporter) flushInsert() {
	if len(e.stmt) == 0 {
		return
	}
	e.stmt = append(e.stmt, ';')
	size := len(e.stmt)
	e.stats.Statements++
	e.stats.LargestStatement = max(e.stats.LargestStatement, size)
	if size > e.max {
		e.stats.Oversize++
	}
	e.bw.Write(append(e.stmt, '\n')) // errors stick in e.cw
	e.stmt = e.stmt[:0]
}
