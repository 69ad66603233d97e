package fold

// TEMPORARY (lead's placeholder until the reshape branch lands).

import (
	"context"
	"fmt"
	"io"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/types"
)

func (e *Engine) Reshape(ctx context.Context, path string, r schema.Reshape, to *schema.Table, meta snapshot.FooterMeta, out io.Writer, progress Progress) (snapshot.WriteResult, error) {
	tf, err := snapshot.OpenTableFile(path)
	if err != nil {
		return snapshot.WriteResult{}, err
	}
	defer tf.Close()
	from := tf.Table()
	idx := make([]int, len(r.Columns))
	for i, c := range r.Columns {
		idx[i] = -1
		if c.From != "" {
			if idx[i] = from.ColumnIndex(c.From); idx[i] < 0 {
				return snapshot.WriteResult{}, fmt.Errorf("column %s not in the table file", c.From)
			}
		}
	}
	tw, err := snapshot.NewTableWriter(out, to, meta, snapshot.WriterOptions{})
	if err != nil {
		return snapshot.WriteResult{}, err
	}
	row := make([]types.Cell, len(r.Columns))
	for {
		in, err := tf.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return snapshot.WriteResult{}, err
		}
		for i, c := range r.Columns {
			switch {
			case idx[i] >= 0:
				row[i] = in[idx[i]]
			case c.Value != nil:
				row[i] = types.TextCell([]byte(*c.Value))
			default:
				row[i] = types.NullCell()
			}
		}
		if err := tw.AppendSQL(row); err != nil {
			return snapshot.WriteResult{}, err
		}
	}
	return tw.Close()
}
