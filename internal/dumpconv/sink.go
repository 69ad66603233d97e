package dumpconv

import (
	"github.com/dbtrail/dbtrail/internal/rowimage"
)

// Sink takes the converted rows in the SQL text form (one value per column
// in table order), as snapshot.TableWriter.AppendSQL does: the
// writer itself, or a filter in front of it. The row's slices are reused
// after AppendSQL returns.
type Sink interface {
	AppendSQL(row []rowimage.Cell) error
}
