package fold

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// checkRowsAt requires RowsAt over in's table file, chain and window to
// pass exactly the rows, in order, of the table file Rewrite wrote from the
// same input (written).
func checkRowsAt(t *testing.T, e *Engine, in RewriteInput, written string) {
	t.Helper()
	at := TableAt{Table: in.Table, TableFile: in.TableFile, Posdel: in.Posdel, Upserts: in.Upserts}
	var got []string
	if err := e.RowsAt(context.Background(), at, in.Window, func(row []rowimage.Cell) error {
		img, err := rowimage.SQLImage(in.Table, row)
		got = append(got, string(img))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	r, err := snapshot.OpenTableFile(written)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var want []string
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		img, err := rowimage.SQLImage(in.Table, row)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, string(img))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("RowsAt passed %d rows, Rewrite wrote %d (or another order)\n%s", len(got), len(want), diff(got, want))
	}
}
