package snapshot

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
)

// measureTable is the table of TestMeasureTable: a key, text and a blob.
func measureTable() *schema.Table {
	return &schema.Table{Schema: "db", Name: "t", KeyKind: schema.KeyPrimary, Key: []string{"id"},
		Columns: []schema.Column{
			{Name: "id", Type: "bigint"},
			{Name: "note", Type: "text", Charset: "utf8mb4", Nullable: true},
			{Name: "data", Type: "blob", Nullable: true},
		}}
}

// measureRow is row id of measureTable in AppendSQL's form.
func measureRow(id int) []rowimage.Cell {
	r := rand.New(rand.NewPCG(uint64(id), 36))
	data := make([]byte, 200)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	return rowimage.RawCells(nil, [][]byte{[]byte(fmt.Sprint(id)), []byte(fmt.Sprintf("note %d of the table", id)), data})
}

// writeMeasured writes a table file (keyed false) or a .upserts file
// (keyed) of rows ids at dir/rel and returns its size.
func writeMeasured(t *testing.T, dir, rel string, keyed bool, ids []int) int64 {
	t.Helper()
	var buf bytes.Buffer
	var res WriteResult
	var err error
	if keyed {
		var kw *KeyedWriter
		kw, err = NewUpsertsWriter(&buf, measureTable(), testMeta(), WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if err := kw.AppendSQL(measureRow(id), fmt.Sprintf("[%d]", id), OpUpsert); err != nil {
				t.Fatal(err)
			}
		}
		res, err = kw.Close()
	} else {
		var tw *TableWriter
		tw, err = NewTableWriter(&buf, measureTable(), testMeta(), WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if err := tw.AppendSQL(measureRow(id)); err != nil {
				t.Fatal(err)
			}
		}
		res, err = tw.Close()
	}
	if err != nil || res.Rows != int64(len(ids)) {
		t.Fatalf("%s: %d rows, %v", rel, res.Rows, err)
	}
	return writeAt(t, dir, rel, buf.Bytes())
}

// writePosdel writes a .posdel file of rows at dir/rel and returns its size.
func writePosdel(t *testing.T, dir, rel string, rows []int64) int64 {
	t.Helper()
	var buf bytes.Buffer
	pw, err := NewPosdelWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := pw.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	return writeAt(t, dir, rel, buf.Bytes())
}

func writeAt(t *testing.T, dir, rel string, b []byte) int64 {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return int64(len(b))
}

// TestMeasureTable: MeasureTable reads the table file's size and rows and
// the chain's size from the manifest alone; with the files on disk, the
// table file's plain and binary plain sizes from its footer, and the sizes
// and rows of the chain's non-empty pairs (the empty chain start and a
// pair whose footer cannot be read are not counted).
func TestMeasureTable(t *testing.T) {
	dir := t.TempDir()
	ids := func(from, to int) []int {
		var out []int
		for i := from; i <= to; i++ {
			out = append(out, i)
		}
		return out
	}
	files := map[string]int64{
		"db/t.parquet":        writeMeasured(t, dir, "db/t.parquet", false, ids(1, 500)),
		"db/t.000000.posdel":  writePosdel(t, dir, "db/t.000000.posdel", nil),
		"db/t.000000.upserts": writeMeasured(t, dir, "db/t.000000.upserts", true, nil),
		"db/t.000001.posdel":  writePosdel(t, dir, "db/t.000001.posdel", []int64{3, 7, 9}),
		"db/t.000001.upserts": writeMeasured(t, dir, "db/t.000001.upserts", true, []int{3, 7, 501, 502, 503}),
		"db/t.000002.posdel":  writeAt(t, dir, "db/t.000002.posdel", []byte("not parquet")),
		"db/t.000002.upserts": writeMeasured(t, dir, "db/t.000002.upserts", true, ids(600, 610)),
	}
	man := Manifest{Files: map[string]digest.Digest{}}
	for rel, n := range files {
		man.Files[rel] = digest.Digest{Size: n}
	}
	mt := ManifestTable{Schema: "db", Table: "t", File: "db/t.parquet", Rows: 500,
		Chain: []string{"db/t.000000.posdel", "db/t.000000.upserts", "db/t.000001.posdel", "db/t.000001.upserts",
			"db/t.000002.posdel", "db/t.000002.upserts"}}
	var chain uint64
	for _, rel := range mt.Chain {
		chain += uint64(files[rel])
	}
	want := spaceneed.Table{File: uint64(files["db/t.parquet"]), Rows: 500, Chain: chain}
	if got := MeasureTable(&man, mt, nil); got != want {
		t.Errorf("from the manifest alone: %+v, want %+v", got, want)
	}
	st, err := ReadFileStats(filepath.Join(dir, "db", "t.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	want.Plain, want.PlainBinary = uint64(st.Plain), uint64(st.PlainBinary)
	want.PairRows, want.PosdelRows = 5, 3
	want.PairBytes = uint64(files["db/t.000001.posdel"] + files["db/t.000001.upserts"])
	got := MeasureTable(&man, mt, func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) })
	if got != want {
		t.Errorf("with the files: %+v, want %+v", got, want)
	}
	// The binary column is measured apart from the text: 500 rows of 200
	// bytes are in it, less than the whole.
	if got.PlainBinary < 500*200 || got.PlainBinary >= got.Plain {
		t.Errorf("plain %d, binary plain %d: want the blob's 100,000 bytes or more, less than the whole", got.Plain, got.PlainBinary)
	}
	rb, ok := got.RowBytes()
	if wantRB := float64(want.PairBytes) / 5; !ok || rb != wantRB {
		t.Errorf("RowBytes %v %v, want the pairs' %v", rb, ok, wantRB)
	}
}
