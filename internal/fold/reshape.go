package fold

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Reshape writes the rows of the table file at path (a table file with no
// chain, of definition from) as a new table file of definition to, its
// footer from meta, to out: every row mapped by r. It reads nothing else.
//
// The file's columns must be r.OldColumns and r must give every column of to
// in order; a value that does not fit its new column (it cannot, when
// schema.PlanReshape planned r from the same definitions) is an error naming
// the table, the row and the column. Rows keep their order.
func (e *Engine) Reshape(ctx context.Context, path string, r schema.Reshape, to *schema.Table, meta snapshot.FooterMeta,
	out io.Writer, progress Progress) (snapshot.WriteResult, error) {
	name := to.QualifiedName()
	tf, err := snapshot.OpenTableFile(path)
	if err != nil {
		return snapshot.WriteResult{}, fmt.Errorf("reshape %s: %w", name, err)
	}
	defer tf.Close()
	pick, consts, err := reshapeMap(tf.Table(), r, to)
	if err != nil {
		return snapshot.WriteResult{}, fmt.Errorf("reshape %s: %w", name, err)
	}
	tw, err := snapshot.NewTableWriter(out, to, meta, snapshot.WriterOptions{Overlap: true})
	if err != nil {
		return snapshot.WriteResult{}, fmt.Errorf("reshape %s: %w", name, err)
	}
	defer tw.Abort() // ends the overlap on a failure; nothing after Close
	row := make([]rowimage.Cell, len(to.Columns))
	for {
		if err := ctx.Err(); err != nil {
			tw.Abort()
			return snapshot.WriteResult{}, fmt.Errorf("reshape %s: %w", name, err)
		}
		in, err := tf.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tw.Abort()
			return snapshot.WriteResult{}, fmt.Errorf("reshape %s: read %s: %w", name, path, err)
		}
		for i, j := range pick {
			if j >= 0 {
				row[i] = in[j]
			} else {
				row[i] = consts[i]
			}
		}
		if err := tw.AppendSQL(row); err != nil {
			tw.Abort()
			return snapshot.WriteResult{}, fmt.Errorf("reshape %s: %w", name, err)
		}
		progress.tick("reshape", tw.Rows())
	}
	res, err := tw.Close()
	if err != nil {
		return snapshot.WriteResult{}, fmt.Errorf("reshape %s: %w", name, err)
	}
	return res, nil
}

// reshapeMap returns, for every column of to, the position of its source in
// the file's columns (from) or -1 and the constant in consts.
func reshapeMap(from *schema.Table, r schema.Reshape, to *schema.Table) (pick []int, consts []rowimage.Cell, err error) {
	if got := from.ColumnNames(); !slices.Equal(got, r.OldColumns) {
		return nil, nil, fmt.Errorf("the table file has columns (%s), the reshape reads (%s)",
			strings.Join(got, ", "), strings.Join(r.OldColumns, ", "))
	}
	if len(r.Columns) != len(to.Columns) {
		return nil, nil, fmt.Errorf("the reshape gives %d columns, the new definition has %d", len(r.Columns), len(to.Columns))
	}
	pick = make([]int, len(to.Columns))
	consts = make([]rowimage.Cell, len(to.Columns))
	for i, c := range r.Columns {
		if !strings.EqualFold(c.Name, to.Columns[i].Name) {
			return nil, nil, fmt.Errorf("column %d of the reshape is %s, the new definition's is %s", i+1, c.Name, to.Columns[i].Name)
		}
		pick[i] = -1
		switch {
		case c.From != "":
			if pick[i] = from.ColumnIndex(c.From); pick[i] < 0 {
				return nil, nil, fmt.Errorf("column %s: no column %s in the table file", c.Name, c.From)
			}
		case c.Value == nil:
			consts[i] = rowimage.NullCell()
		default:
			consts[i] = rowimage.TextCell([]byte(*c.Value))
		}
	}
	return pick, consts, nil
}
