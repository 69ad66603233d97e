package snapshot

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

func writeBytes(p string, b []byte) error { return os.WriteFile(p, b, 0o644) }

// readAll reads every row of a table file, copied.
func readAll(t testing.TB, r *TableReader) [][][]byte {
	t.Helper()
	var out [][][]byte
	for {
		row, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rawRow(row))
	}
}

// expectedBack is what reading back gives where it differs from the input:
// the stored value is the canonical one (padding, normalised zero and scale).
func expectedBack(row int, col string) ([]byte, bool) {
	zeros := func(n int) []byte { return make([]byte, n) }
	m := map[[2]any][]byte{
		{0, "js"}:    []byte("null"),
		{0, "bn"}:    zeros(8),
		{1, "bn"}:    append([]byte("ab"), zeros(6)...),
		{3, "cb"}:    zeros(4),
		{4, "si"}:    []byte("0"),
		{4, "dec65"}: []byte("-0.500000000000000000000000000000"),
		{3, "tm0"}:   []byte("00:00:00"),
		{4, "bt"}:    {0, 0, 0, 0, 0, 0, 0, 1},
	}
	v, ok := m[[2]any{row, col}]
	return v, ok
}

func TestRoundTripAllTypes(t *testing.T) {
	tbl := allTypes()
	rows, _ := allTypesRows()
	// Tiny row groups so that several are written and read.
	p, res := writeFile(t, t.TempDir(), "all.parquet", tbl, rows, WriterOptions{RowGroupRows: 2})
	if res.Rows != int64(len(rows)) || res.RowGroups != 3 {
		t.Fatalf("result %+v", res)
	}
	r, err := OpenTableFile(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := readAll(t, r)
	if len(got) != len(rows) {
		t.Fatalf("read %d rows, wrote %d", len(got), len(rows))
	}
	var fp Fingerprint
	for i := range rows {
		canon := make([][]byte, len(tbl.Columns))
		for j := range tbl.Columns {
			c := &tbl.Columns[j]
			want := rows[i][j]
			if w, ok := expectedBack(i, c.Name); ok {
				want = w
			}
			if (want == nil) != (got[i][j] == nil) || !bytes.Equal(want, got[i][j]) {
				t.Errorf("row %d column %s: got %q, want %q", i, c.Name, got[i][j], want)
			}
			a, err := rowimage.AppendSQLValue(nil, c, rowimage.RawCell(rows[i][j]))
			if err != nil {
				t.Fatalf("row %d column %s: %v", i, c.Name, err)
			}
			b, err := rowimage.AppendSQLValue(nil, c, rowimage.RawCell(got[i][j]))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("row %d column %s: canonical %s, read back %s (%v)", i, c.Name, a, b, err)
			}
			canon[j] = a
		}
		fp.Add(RowHash(canon))
	}
	if fp != res.Fingerprint {
		t.Errorf("fingerprint from RowHash %s, writer %s", fp, res.Fingerprint)
	}
	if f := r.Footer(); f.Fingerprint != res.Fingerprint || f.Rows != 5 {
		t.Errorf("footer %s rows %d", f.Fingerprint, f.Rows)
	}
}

func TestAppendImageMatchesAppendSQL(t *testing.T) {
	tbl := allTypes()
	rows, _ := allTypesRows()
	var a, b bytes.Buffer
	wa, err := NewTableWriter(&a, tbl, testMeta(), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wb, err := NewTableWriter(&b, tbl, testMeta(), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		img, err := rowimage.SQLImage(tbl, rowimage.RawCells(nil, r))
		if err != nil {
			t.Fatal(err)
		}
		if err := wa.AppendSQL(rowimage.RawCells(nil, r)); err != nil {
			t.Fatal(err)
		}
		if err := wb.AppendImage(img); err != nil {
			t.Fatalf("%s: %v", img, err)
		}
	}
	ra, err := wa.Close()
	if err != nil {
		t.Fatal(err)
	}
	rb, err := wb.Close()
	if err != nil {
		t.Fatal(err)
	}
	if ra.Fingerprint != rb.Fingerprint || !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("image and SQL rows give different files: %s vs %s", ra.Fingerprint, rb.Fingerprint)
	}
}

func TestAppendErrorsNameTheValue(t *testing.T) {
	tbl := &schema.Table{Schema: "s", Name: "t", Columns: []schema.Column{
		{Name: "id", Type: "bigint", Unsigned: true}, {Name: "d", Type: "date"}, {Name: "x", Type: "varchar", Charset: "utf8mb4"},
	}}
	var buf bytes.Buffer
	tw, err := NewTableWriter(&buf, tbl, FooterMeta{}, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.AppendSQL(rowimage.RawCells(nil, [][]byte{[]byte("1"), []byte("2026-01-01"), []byte("ok")})); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("9", 200)
	for _, tc := range []struct {
		row  [][]byte
		want []string
	}{
		{[][]byte{[]byte("18446744073709551616"), nil, nil}, []string{"table s.t row 2 column id", `"18446744073709551616"`, "overflows"}},
		{[][]byte{[]byte("-1"), nil, nil}, []string{"column id", "negative"}},
		{[][]byte{[]byte("1"), []byte("2026-13-01"), nil}, []string{"column d", "malformed date"}},
		{[][]byte{[]byte(long), nil, nil}, []string{"(200 bytes)"}},
		{[][]byte{[]byte("1"), nil, {0xff}}, []string{"column x", "invalid UTF-8"}},
	} {
		err := tw.AppendSQL(rowimage.RawCells(nil, tc.row))
		var re *RowError
		if !errors.As(err, &re) {
			t.Fatalf("%q: got %v, want a RowError", tc.row, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not contain %q", err, w)
			}
		}
	}
	if err := tw.AppendImage([]byte(`{"id":"1","d":null,"x":null}`)); err == nil || !strings.Contains(err.Error(), "wrong kind") {
		t.Errorf("string for a bigint in an image: %v", err)
	}
	if err := tw.AppendImage([]byte(`{"id":1,"x":null,"d":null}`)); err == nil {
		t.Error("misordered image accepted")
	}
	res, err := tw.Close()
	if err != nil || res.Rows != 1 {
		t.Fatalf("rejected rows were written: %+v %v", res, err)
	}
	r, err := OpenTableFile(writeTemp(t, buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := readAll(t, r); len(got) != 1 || string(got[0][2]) != "ok" {
		t.Fatalf("read %q", got)
	}
}

func writeTemp(t testing.TB, b []byte) string {
	p := t.TempDir() + "/f.parquet"
	if err := writeBytes(p, b); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFooterRoundTrip(t *testing.T) {
	tbl := allTypes()
	rows, _ := allTypesRows()
	p, res := writeFile(t, t.TempDir(), "all.parquet", tbl, rows, WriterOptions{})
	m, err := ReadFooter(p)
	if err != nil {
		t.Fatal(err)
	}
	want := testMeta()
	if m.CreateTable != want.CreateTable || m.Position != want.Position || m.SnapshotID != want.SnapshotID ||
		m.Source != want.Source || m.WriterVersion != WriterVersion || m.Rows != 5 || m.Fingerprint != res.Fingerprint {
		t.Fatalf("footer %+v", m)
	}
	if !schema.SameShape(m.Table, tbl) || m.Table.QualifiedName() != "db1.all_types" || len(m.Table.Columns[m.Table.ColumnIndex("en")].Elems) != 3 {
		t.Fatalf("footer table %+v", m.Table)
	}
}

func TestFingerprintOrderIndependentAndFramed(t *testing.T) {
	a := [][]byte{[]byte("1"), []byte(`"x"`)}
	b := [][]byte{[]byte("2"), nil}
	var f1, f2 Fingerprint
	f1.Add(RowHash(a))
	f1.Add(RowHash(b))
	f2.Add(RowHash(b))
	f2.Add(RowHash(a))
	if f1 != f2 || f1.Rows != 2 {
		t.Fatal("fingerprint depends on order")
	}
	if RowHash([][]byte{nil}) != RowHash([][]byte{[]byte("null")}) {
		t.Error("nil and null differ")
	}
	for _, pair := range [][2][][]byte{
		{{[]byte(`"ab"`), []byte(`"c"`)}, {[]byte(`"a"`), []byte(`"bc"`)}},
		{{nil}, {[]byte(`"null"`)}},
		{{[]byte("1"), nil}, {nil, []byte("1")}},
	} {
		if RowHash(pair[0]) == RowHash(pair[1]) {
			t.Errorf("%q and %q collide", pair[0], pair[1])
		}
	}
	g, err := ParseFingerprint(f1.String())
	if err != nil || g != f1 || !strings.HasPrefix(f1.String(), "2:") || len(f1.String()) != 18 {
		t.Fatalf("%s -> %v %v", f1, g, err)
	}
}

// TestManyRowsRowGroups checks row-group boundaries, validity bitmaps and
// buffer reuse: every value read back canonicalises to the value written.
func TestManyRowsRowGroups(t *testing.T) {
	tbl, rows := benchTable(), benchRowsSQL(20_011)
	for _, opts := range []WriterOptions{{RowGroupRows: 3001}, {RowGroupBytes: 100_000}} {
		var buf bytes.Buffer
		tw, err := NewTableWriter(&buf, tbl, FooterMeta{}, opts)
		if err != nil {
			t.Fatal(err)
		}
		row := make([][]byte, rows.cols)
		var fp Fingerprint
		canon := make([][]byte, rows.cols)
		for i := range rows.len() {
			rows.row(i, row)
			if err := tw.AppendSQL(rowimage.RawCells(nil, row)); err != nil {
				t.Fatal(err)
			}
			for j := range row {
				canon[j], _ = rowimage.AppendSQLValue(nil, &tbl.Columns[j], rowimage.RawCell(row[j]))
			}
			fp.Add(RowHash(canon))
		}
		res, err := tw.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.Rows != 20_011 || res.RowGroups < 7 || res.Fingerprint != fp || res.Bytes != int64(buf.Len()) {
			t.Fatalf("%+v: result %+v, fingerprint %s", opts, res, fp)
		}
		r, err := OpenTableFile(writeTemp(t, buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		var back Fingerprint
		for i := 0; ; i++ {
			got, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			rows.row(i, row)
			for j := range got {
				c := &tbl.Columns[j]
				if got[j].Null != (row[j] == nil) {
					t.Fatalf("row %d column %s: NULL mismatch %q vs %q", i, c.Name, got[j].Text, row[j])
				}
				canon[j], err = rowimage.AppendSQLValue(nil, c, got[j])
				if err != nil {
					t.Fatal(err)
				}
			}
			back.Add(RowHash(canon))
		}
		r.Close()
		if back != fp {
			t.Fatalf("%+v: read back %s, wrote %s", opts, back, fp)
		}
	}
}

// rawRow copies a row read back into the test fixtures' form: nil for NULL,
// a non-nil slice (maybe empty) for a value.
func rawRow(row []rowimage.Cell) [][]byte {
	out := make([][]byte, len(row))
	for i, v := range row {
		if !v.Null {
			out[i] = append([]byte{}, v.Text...)
		}
	}
	return out
}
