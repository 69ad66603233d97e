package rowimage

// Cell is one column value in the SQL text form: what `SELECT` returns for
// it through database/sql with parseTime=false (see AppendSQLValue). NULL is
// told by Null alone, never by the slice: an empty Text is the empty value
// (an empty string or BLOB) whether or not the slice is nil. This is the form a
// row takes wherever it crosses a function boundary inside dbtrail (dump
// conversion, images, table files and chains, exports, verify).
type Cell struct {
	// Text is the value's text; ignored when Null is set.
	Text []byte
	// Null marks SQL NULL.
	Null bool
}

// NullCell returns the NULL cell.
func NullCell() Cell { return Cell{Null: true} }

// TextCell returns the cell holding text b; an empty or nil b is the empty
// value, never NULL.
func TextCell(b []byte) Cell { return Cell{Text: b} }

// RawCell converts a value as database/sql drivers give it (sql.RawBytes or
// []byte: nil for NULL, a non-nil empty slice for an empty value). It is the
// one place where a nil slice means NULL: call it only on a driver's output.
func RawCell(raw []byte) Cell { return Cell{Text: raw, Null: raw == nil} }

// RawCells converts a whole row of driver values with RawCell, reusing dst.
func RawCells(dst []Cell, raw [][]byte) []Cell {
	dst = dst[:0]
	for _, b := range raw {
		dst = append(dst, RawCell(b))
	}
	return dst
}
