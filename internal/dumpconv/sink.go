package dumpconv

// Sink takes the converted rows in the SQL text form (one value per column
// in table order, nil = NULL), as snapshot.TableWriter.AppendSQL does: the
// writer itself, or a filter in front of it. The row's slices are reused
// after AppendSQL returns.
type Sink interface {
	AppendSQL(row [][]byte) error
}
