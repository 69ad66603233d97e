package snapshot

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// TestOpenTableFileFrom writes a scratch table file of row groups of 100
// rows (Groups says where each starts) and reads it from every row group:
// the rows are those from the group's first on, and a file read from a
// group ends with its own count checked.
func TestOpenTableFileFrom(t *testing.T) {
	tbl := &schema.Table{Schema: "s", Name: "t", KeyKind: schema.KeyPrimary, Key: []string{"id"}, Columns: []schema.Column{
		{Name: "id", Type: "bigint"}, {Name: "x", Type: "varchar", Length: 20, Charset: "utf8mb4", Nullable: true}}}
	path := filepath.Join(t.TempDir(), "t.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	tw, err := NewTableWriter(f, tbl, FooterMeta{}, WriterOptions{RowGroupRows: 100, Scratch: true, Overlap: true})
	if err != nil {
		t.Fatal(err)
	}
	const rows = 450
	var starts []int
	for i := range rows {
		g := tw.Groups()
		if err := tw.AppendSQL(rowimage.RawCells(nil, [][]byte{fmt.Appendf(nil, "%d", i), fmt.Appendf(nil, "x%d", i)})); err != nil {
			t.Fatal(err)
		}
		if tw.Groups() != g {
			starts = append(starts, i)
		}
	}
	if _, err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 100, 200, 300, 400}; fmt.Sprint(starts) != fmt.Sprint(want) {
		t.Fatalf("row groups start at rows %v, want %v", starts, want)
	}
	for g, first := range starts {
		r, err := OpenTableFileFrom(path, g)
		if err != nil {
			t.Fatal(err)
		}
		n := first
		for {
			row, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("from group %d: %v", g, err)
			}
			if got := string(row[0].Text); got != fmt.Sprint(n) {
				t.Fatalf("from group %d: row %d has id %s", g, n, got)
			}
			n++
		}
		r.Close()
		if n != rows {
			t.Errorf("from group %d: read up to row %d, want %d", g, n, rows)
		}
	}
	if _, err := OpenTableFileFrom(path, 6); err == nil {
		t.Error("row group 6 of 5 opened")
	}
}
