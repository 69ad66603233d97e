package sqlexport

import (
	"fmt"
	"strings"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// Rows renders rows of one table as the value tuples of a multi-row INSERT,
// with the literals of a `.sql` export (appendLiteral): a loader that
// sends them under Header's session settings stores exactly the values an
// export would. Generated columns are not in t.Columns (a snapshot's
// definition keeps them under Derived), so the server computes them.
type Rows struct {
	t     *schema.Table
	kinds []literalKind
	cols  []string
}

// NewRows prepares the literals of t's columns; an unsupported column type
// is an error naming the table and column.
func NewRows(t *schema.Table) (*Rows, error) {
	r := &Rows{t: t, kinds: make([]literalKind, len(t.Columns)), cols: make([]string, len(t.Columns))}
	for i := range t.Columns {
		k, err := literalKindOf(&t.Columns[i])
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", t.QualifiedName(), err)
		}
		r.kinds[i], r.cols[i] = k, quoteIdent(t.Columns[i].Name)
	}
	return r, nil
}

// InsertPrefix is "INSERT INTO `schema`.`table` (`a`,`b`) VALUES " for the
// table named schemaName.table (the load's target, which may differ from
// the source's).
func (r *Rows) InsertPrefix(schemaName, table string) string {
	return "INSERT INTO " + quoteIdent(schemaName) + "." + quoteIdent(table) + " (" + strings.Join(r.cols, ",") + ") VALUES "
}

// AppendTuple appends row as "(v1,v2,...)" to dst. n (1-based) names the
// row in an error.
func (r *Rows) AppendTuple(dst []byte, n int64, row []rowimage.Cell) ([]byte, error) {
	name := r.t.QualifiedName()
	if len(row) != len(r.kinds) {
		return dst, fmt.Errorf("table %s row %d: %d values for %d columns", name, n, len(row), len(r.kinds))
	}
	var err error
	dst = append(dst, '(')
	for i, v := range row {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendLiteral(dst, r.kinds[i], v); err != nil {
			return dst, fmt.Errorf("table %s row %d column %s: %w", name, n, r.t.Columns[i].Name, err)
		}
	}
	return append(dst, ')'), nil
}

// QuoteIdent quotes a MySQL identifier with backticks.
func QuoteIdent(name string) string { return quoteIdent(name) }
