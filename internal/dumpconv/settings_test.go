package dumpconv

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// chunkLayout describes every column chunk of a Parquet file: rows,
// encodings, dictionary page, compressed and uncompressed sizes,
// statistics.
func chunkLayout(t *testing.T, b []byte) []string {
	rdr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	md := rdr.MetaData()
	var out []string
	for g := range md.NumRowGroups() {
		rg := md.RowGroup(g)
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			st, _ := cc.StatsSet()
			out = append(out, fmt.Sprintf("group %d column %d: %d rows, codec %s, encodings %v, dictionary page %v, %d/%d bytes, statistics %v",
				g, c, rg.NumRows(), cc.Compression(), cc.Encodings(), cc.HasDictionaryPage(), cc.TotalCompressedSize(), cc.TotalUncompressedSize(), st))
		}
	}
	return out
}

// TestConvertWritesWhatTheRawWriteWrites: the conversion (with Overlap, as
// ConvertTable runs it) writes the column chunks the benchmarks' raw
// pqarrow.WriteTable writes of the same rows: same row groups, codec,
// encodings, dictionary pages, sizes and statistics. The comparison is like
// with like; only the footer's key-value metadata differs.
func TestConvertWritesWhatTheRawWriteWrites(t *testing.T) {
	fsys, def := benchDump(t, 150_000)
	var conv, raw bytes.Buffer
	if err := convertTo(fsys, def, &conv, snapshot.WriterOptions{Overlap: true}); err != nil {
		t.Fatal(err)
	}
	tbl := readTable(t, conv.Bytes())
	defer tbl.Release()
	if err := rawWrite(tbl, def, &raw); err != nil {
		t.Fatal(err)
	}
	c, r := chunkLayout(t, conv.Bytes()), chunkLayout(t, raw.Bytes())
	if len(c) != 2*7 || len(c) != len(r) {
		t.Fatalf("conversion wrote %d column chunks, raw write %d, want 2 row groups of 7", len(c), len(r))
	}
	for i := range c {
		if c[i] != r[i] {
			t.Errorf("conversion: %s\n     raw: %s", c[i], r[i])
		}
	}
}
