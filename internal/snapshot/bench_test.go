package snapshot

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/testsuite"
)

const benchRows = 200_000

// benchTable is a typical 7-column table.
func benchTable() *schema.Table {
	dec := schema.Column{Name: "price", Type: "decimal", Precision: 12, Scale: 2}
	return &schema.Table{Schema: "shop", Name: "orders", Key: []string{"id"}, KeyKind: schema.KeyPrimary, Columns: []schema.Column{
		{Name: "id", Type: "bigint", Unsigned: true},
		{Name: "customer", Type: "int"},
		{Name: "name", Type: "varchar", Length: 64, Charset: "utf8mb4", Nullable: true},
		dec,
		{Name: "created", Type: "datetime"},
		{Name: "score", Type: "double", Nullable: true},
		{Name: "status", Type: "tinyint"},
	}}
}

// sqlRows holds rows in SQL text form in one pointer-free arena, as a
// database/sql scan loop sees them (sql.RawBytes reused for every row), so
// that the fixture adds nothing to garbage collection.
type sqlRows struct {
	arena []byte
	ends  []int32 // per value: end offset in arena, or -1 for NULL
	cols  int
}

func (s *sqlRows) len() int { return len(s.ends) / s.cols }

// row fills dst (len cols) with row i; the slices alias the arena.
func (s *sqlRows) row(i int, dst [][]byte) {
	start := int32(0)
	for k := i * s.cols; k > 0; k-- {
		if e := s.ends[k-1]; e >= 0 {
			start = e
			break
		}
	}
	for c := range dst {
		e := s.ends[i*s.cols+c]
		if e < 0 {
			dst[c] = nil
			continue
		}
		dst[c] = s.arena[start:e:e]
		start = e
	}
}

// benchRowsSQL returns n rows of benchTable in SQL text form.
func benchRowsSQL(n int) *sqlRows {
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &sqlRows{cols: 7}
	add := func(v []byte, null bool) {
		if null {
			s.ends = append(s.ends, -1)
			return
		}
		s.arena = append(s.arena, v...)
		s.ends = append(s.ends, int32(len(s.arena)))
	}
	var tmp []byte
	for i := range n {
		null := i%10 == 0 || rng.IntN(7) == 0
		add(strconv.AppendUint(tmp[:0], uint64(i+1), 10), false)
		add(strconv.AppendInt(tmp[:0], int64(rng.IntN(1_000_000)), 10), false)
		add(fmt.Appendf(tmp[:0], "customer %d %s", rng.IntN(50_000), []string{"Ana", "Bo", "Chloé", "Dmitri"}[i%4]), null)
		add(fmt.Appendf(tmp[:0], "%d.%02d", rng.IntN(100_000), rng.IntN(100)), false)
		add(base.Add(time.Duration(i)*17*time.Second).AppendFormat(tmp[:0], "2006-01-02 15:04:05"), false)
		add(strconv.AppendFloat(tmp[:0], rng.Float64()*1000, 'g', -1, 64), null)
		add(strconv.AppendInt(tmp[:0], int64(rng.IntN(5)), 10), false)
	}
	return s
}

// reportRows reports rows per wall second and per CPU second since cpu0.
func reportRows(b *testing.B, rows int, cpu0 float64) {
	n := float64(rows) * float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(n/(testsuite.ProcessCPUTime().Seconds()-cpu0), "rows/cpu-s")
}

// BenchmarkTableWriter: SQL text rows → canonical form, RowHash, Arrow
// builders, Parquet zstd.
func BenchmarkTableWriter(b *testing.B) { benchTableWriter(b, WriterOptions{}) }

// BenchmarkTableWriterOverlap is BenchmarkTableWriter with the Parquet
// writing in a goroutine of its own.
func BenchmarkTableWriterOverlap(b *testing.B) { benchTableWriter(b, WriterOptions{Overlap: true}) }

func benchTableWriter(b *testing.B, opts WriterOptions) {
	tbl, rows := benchTable(), benchRowsSQL(benchRows)
	b.ResetTimer()
	cpu0 := testsuite.ProcessCPUTime().Seconds()
	for range b.N {
		tw, err := NewTableWriter(io.Discard, tbl, FooterMeta{}, opts)
		if err != nil {
			b.Fatal(err)
		}
		row := make([][]byte, rows.cols)
		var cells []rowimage.Cell
		for i := range rows.len() {
			rows.row(i, row)
			cells = rowimage.RawCells(cells, row)
			if err := tw.AppendSQL(cells); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := tw.Close(); err != nil {
			b.Fatal(err)
		}
	}
	reportRows(b, rows.len(), cpu0)
}

// BenchmarkArrowRawWrite is the baseline: the same rows prebuilt as Arrow
// columns, written by pqarrow with the same properties (zstd, row groups).
func BenchmarkArrowRawWrite(b *testing.B) {
	tbl, rows := benchTable(), benchRowsSQL(benchRows)
	sc, err := ArrowSchema(tbl)
	if err != nil {
		b.Fatal(err)
	}
	rec := prebuild(b, sc, rows)
	defer rec.Release()
	b.ResetTimer()
	cpu0 := testsuite.ProcessCPUTime().Seconds()
	for range b.N {
		fw, err := newParquetWriter(sc, &countingWriter{w: io.Discard}, WriterOptions{RowGroupRows: DefaultRowGroupRows})
		if err != nil {
			b.Fatal(err)
		}
		for off := int64(0); off < rec.NumRows(); off += DefaultRowGroupRows {
			part := rec.NewSlice(off, min(off+DefaultRowGroupRows, rec.NumRows()))
			err := fw.Write(part)
			part.Release()
			if err != nil {
				b.Fatal(err)
			}
		}
		if err := fw.Close(); err != nil {
			b.Fatal(err)
		}
	}
	reportRows(b, rows.len(), cpu0)
}

// prebuild converts rows to one Arrow record outside the timed loop.
func prebuild(b *testing.B, sc *arrow.Schema, rows *sqlRows) arrow.RecordBatch {
	bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer bld.Release()
	r := make([][]byte, rows.cols)
	for i := range rows.len() {
		rows.row(i, r)
		u, _ := strconv.ParseUint(string(r[0]), 10, 64)
		bld.Field(0).(*array.Uint64Builder).Append(u)
		n, _ := strconv.ParseInt(string(r[1]), 10, 32)
		bld.Field(1).(*array.Int32Builder).Append(int32(n))
		if r[2] == nil {
			bld.Field(2).AppendNull()
		} else {
			bld.Field(2).(*array.StringBuilder).Append(string(r[2]))
		}
		bld.Field(3).(*array.StringBuilder).Append(string(r[3]))
		bld.Field(4).(*array.StringBuilder).Append(string(r[4]))
		if r[5] == nil {
			bld.Field(5).AppendNull()
		} else {
			f, _ := strconv.ParseFloat(string(r[5]), 64)
			bld.Field(5).(*array.Float64Builder).Append(f)
		}
		s, _ := strconv.ParseInt(string(r[6]), 10, 8)
		bld.Field(6).(*array.Int8Builder).Append(int8(s))
	}
	return bld.NewRecordBatch()
}
