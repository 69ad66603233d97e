package dumpconv

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"testing/fstest"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/testsuite"
)

// benchSchema is the table of cmd/dbtrail-bench's conversion benchmark.
const benchSchema = "/*!40101 SET NAMES binary*/;\n/*!40014 SET FOREIGN_KEY_CHECKS=0*/;\n" +
	"CREATE TABLE `t` (\n  `id` int(11) NOT NULL,\n  `a` int(11) NOT NULL,\n  `b` varchar(100) DEFAULT NULL,\n" +
	"  `c` datetime(6) DEFAULT NULL,\n  `d` decimal(12,2) DEFAULT NULL,\n  `e` double DEFAULT NULL,\n" +
	"  `f` varchar(200) DEFAULT NULL,\n  PRIMARY KEY (`id`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;\n"

const benchRows = 300_000

// benchDump returns the benchmark table's definition and a dump of n rows
// as mydumper 0.10 writes it: one row per line, a new INSERT about every
// megabyte.
func benchDump(b testing.TB, n int) (fstest.MapFS, *schema.Table) {
	var d bytes.Buffer
	d.WriteString(header)
	stmt := 0
	for i := 1; i <= n; i++ {
		if stmt == 0 {
			d.WriteString("INSERT INTO `t` VALUES\n")
		} else {
			d.WriteString(",\n")
		}
		at := d.Len()
		fmt.Fprintf(&d, "(%d,%d,\"name-%d\",\"2026-11-29 %02d:%02d:%02d.123456\",%d.%02d,%g,\"%s\")",
			i, i%1000, i, 8+i/3600%16, i/60%60, i%60, i/7, i%7*14, float64(i)*1.5, bytes.Repeat([]byte("f"), 20+i%80))
		if stmt += d.Len() - at; stmt > 1<<20 {
			d.WriteString(";\n")
			stmt = 0
		}
	}
	if stmt > 0 {
		d.WriteString(";\n")
	}
	fsys := fstest.MapFS{"conv.t-schema.sql": {Data: []byte(benchSchema)}, "conv.t.00000.sql": {Data: d.Bytes()}}
	def, _, err := Definition(fsys, "conv", "t", "conv.t-schema.sql")
	if err != nil {
		b.Fatal(err)
	}
	return fsys, def
}

// convertTo converts the benchmark dump into w.
func convertTo(fsys fstest.MapFS, def *schema.Table, w io.Writer, opts snapshot.WriterOptions) error {
	tw, err := snapshot.NewTableWriter(w, def, snapshot.FooterMeta{SnapshotID: "20261129T090000Z", Source: "bench"}, opts)
	if err != nil {
		return err
	}
	defer tw.Abort()
	if err := Convert(context.Background(), fsys, []string{"conv.t.00000.sql"}, def, tw, nil); err != nil {
		return err
	}
	_, err = tw.Close()
	return err
}

// BenchmarkConvert: dump → parser → SQL text → table writer, Parquet
// written in a goroutine of its own (as ConvertTable does).
func BenchmarkConvert(b *testing.B) { benchConvert(b, snapshot.WriterOptions{Overlap: true}) }

// BenchmarkConvertSerial writes Parquet in the appending goroutine.
func BenchmarkConvertSerial(b *testing.B) { benchConvert(b, snapshot.WriterOptions{}) }

func benchConvert(b *testing.B, opts snapshot.WriterOptions) {
	fsys, def := benchDump(b, benchRows)
	b.ResetTimer()
	cpu0 := testsuite.ProcessCPUTime().Seconds()
	for range b.N {
		if err := convertTo(fsys, def, io.Discard, opts); err != nil {
			b.Fatal(err)
		}
	}
	reportRows(b, benchRows, cpu0)
}

// BenchmarkConvertArrowRaw is the baseline of BenchmarkConvert: the same
// rows, read back from the converted file as Arrow columns, written by
// pqarrow with zstd and the same row groups.
func BenchmarkConvertArrowRaw(b *testing.B) {
	fsys, def := benchDump(b, benchRows)
	var buf bytes.Buffer
	if err := convertTo(fsys, def, &buf, snapshot.WriterOptions{}); err != nil {
		b.Fatal(err)
	}
	tbl := readTable(b, buf.Bytes())
	defer tbl.Release()
	b.ResetTimer()
	cpu0 := testsuite.ProcessCPUTime().Seconds()
	for range b.N {
		if err := rawWrite(tbl, def, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	reportRows(b, benchRows, cpu0)
}

// readTable reads a table file back as Arrow columns.
func readTable(tb testing.TB, data []byte) arrow.Table {
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		tb.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return tbl
}

// rawWrite is the raw write of the benchmarks: pqarrow.WriteTable, zstd,
// the table writer's row groups and dictionary settings, the Arrow
// schema stored.
func rawWrite(tbl arrow.Table, def *schema.Table, w io.Writer) error {
	props := parquet.NewWriterProperties(append([]parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithMaxRowGroupLength(snapshot.DefaultRowGroupRows)}, snapshot.DictionaryProperties(def, tbl.Schema())...)...)
	return pqarrow.WriteTable(tbl, w, snapshot.DefaultRowGroupRows, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
}

// reportRows reports rows per wall second and per CPU second since cpu0.
func reportRows(b *testing.B, rows int, cpu0 float64) {
	n := float64(rows) * float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(n/(testsuite.ProcessCPUTime().Seconds()-cpu0), "rows/cpu-s")
}
