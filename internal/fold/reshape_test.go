package fold_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// reshapeFixture writes a table file of d.t (id, a, b) with three rows and
// returns its definition and path.
func reshapeFixture(t *testing.T) (*schema.Catalog, *schema.Table, string) {
	t.Helper()
	cat := schema.NewCatalog()
	cat.SetSchemaCharset("d", "utf8mb4")
	if _, err := schema.ApplyDDL(cat, "d", "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, a VARCHAR(5), b INT)"); err != nil {
		t.Fatal(err)
	}
	old, _ := cat.Get("d", "t")
	path := filepath.Join(t.TempDir(), "t.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw, err := snapshot.NewTableWriter(f, old, snapshot.FooterMeta{SnapshotID: "s1"}, snapshot.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range [][]rowimage.Cell{
		{rowimage.TextCell([]byte("1")), rowimage.TextCell([]byte("x ")), rowimage.TextCell([]byte("10"))},
		{rowimage.TextCell([]byte("2")), rowimage.NullCell(), rowimage.NullCell()},
		{rowimage.TextCell([]byte("3")), rowimage.TextCell(nil), rowimage.TextCell([]byte("-3"))},
	} {
		if err := tw.AppendSQL(row); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return cat, old, path
}

// TestReshapeRows: every row of the file is mapped, in order: kept, renamed
// and moved values as they are, an added column's constant, NULLs kept.
func TestReshapeRows(t *testing.T) {
	ctx := context.Background()
	cat, old, path := reshapeFixture(t)
	stmt := "ALTER TABLE t ADD COLUMN z DECIMAL(5,2) NOT NULL DEFAULT 1.5 FIRST, DROP COLUMN b, RENAME COLUMN a TO a2, MODIFY id BIGINT NOT NULL AFTER a2, ADD n INT"
	if _, err := schema.ApplyDDL(cat, "d", stmt); err != nil {
		t.Fatal(err)
	}
	to, _ := cat.Get("d", "t")
	r, err := schema.PlanReshape(old, to, stmt)
	if err != nil {
		t.Fatal(err)
	}
	e, err := fold.Open(ctx, fold.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	out := filepath.Join(t.TempDir(), "out.parquet")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Reshape(ctx, path, r, to, snapshot.FooterMeta{SnapshotID: "s2"}, f, nil)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 3 {
		t.Errorf("%d rows written, want 3", res.Rows)
	}
	tr, err := snapshot.OpenTableFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if got := strings.Join(tr.Table().ColumnNames(), ","); got != "z,a2,id,n" {
		t.Errorf("columns %s, want z,a2,id,n", got)
	}
	var got []string
	for {
		row, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var b []byte
		for i := range row {
			if b, err = rowimage.AppendSQLValue(append(b, ' '), &to.Columns[i], row[i]); err != nil {
				t.Fatal(err)
			}
		}
		got = append(got, string(bytes.TrimSpace(b)))
	}
	want := []string{`"1.50" "x " 1 null`, `"1.50" null 2 null`, `"1.50" "" 3 null`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if tr.Footer().Fingerprint != res.Fingerprint || tr.Footer().SnapshotID != "s2" {
		t.Errorf("footer %+v, want the result's fingerprint and snapshot s2", tr.Footer())
	}
}

// TestReshapeRefuses: a reshape planned for another file, or a constant
// that does not fit its column, is an error naming the table and column,
// and nothing is taken for a table file.
func TestReshapeRefuses(t *testing.T) {
	ctx := context.Background()
	_, old, path := reshapeFixture(t)
	e, err := fold.Open(ctx, fold.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	bad := "x"
	to := old.Clone()
	to.Columns = append(to.Columns, schema.Column{Name: "z", Type: "int", Nullable: true})
	keep := []schema.ColumnSource{{Name: "id", From: "id"}, {Name: "a", From: "a"}, {Name: "b", From: "b"}}
	for _, c := range []struct {
		r    schema.Reshape
		want string
	}{
		{schema.Reshape{OldColumns: []string{"id", "a"}, Columns: keep}, "the table file has columns (id, a, b), the reshape reads (id, a)"},
		{schema.Reshape{OldColumns: []string{"id", "a", "b"}, Columns: keep}, "the reshape gives 3 columns, the new definition has 4"},
		{schema.Reshape{OldColumns: []string{"id", "a", "b"}, Columns: append(keep[:3:3], schema.ColumnSource{Name: "z", From: "q"})}, "column z: no column q"},
		{schema.Reshape{OldColumns: []string{"id", "a", "b"}, Columns: append(keep[:3:3], schema.ColumnSource{Name: "z", Value: &bad})}, "column z"},
	} {
		var buf bytes.Buffer
		_, err := e.Reshape(ctx, path, c.r, to, snapshot.FooterMeta{}, &buf, nil)
		if err == nil || !strings.Contains(err.Error(), "reshape d.t") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error on d.t saying %q", err, c.want)
		}
	}
}
