package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/dbtrail/dbtrail/internal/rowimage"
)

// writeRows appends every row of rows to a new table writer on w and closes
// it.
func writeRows(w io.Writer, rows *sqlRows, opts WriterOptions) (WriteResult, error) {
	tw, err := NewTableWriter(w, benchTable(), testMeta(), opts)
	if err != nil {
		return WriteResult{}, err
	}
	defer tw.Abort()
	row := make([][]byte, rows.cols)
	var cells []rowimage.Cell
	for i := range rows.len() {
		rows.row(i, row)
		cells = rowimage.RawCells(cells, row)
		if err := tw.AppendSQL(cells); err != nil {
			return WriteResult{}, err
		}
	}
	return tw.Close()
}

// TestOverlapWritesTheSameFile: with Overlap the file holds what it holds
// without (same size, rows, fingerprint and row groups; arrow-go orders the
// footer's page encoding statistics from a map, so bytes may differ there
// between any two runs); row groups are cut where the options say, whatever the
// slices (several slices per row group, a row group ending mid-slice); the
// rows read back are the rows written, in order.
func TestOverlapWritesTheSameFile(t *testing.T) {
	rows := benchRowsSQL(70_000)
	for _, opts := range []WriterOptions{{}, {RowGroupRows: 50_000}, {RowGroupRows: 5_000}, {RowGroupBytes: 1 << 20}} {
		t.Run(fmt.Sprintf("rows %d bytes %d", opts.RowGroupRows, opts.RowGroupBytes), func(t *testing.T) {
			var serial, overlap bytes.Buffer
			res, err := writeRows(&serial, rows, opts)
			if err != nil {
				t.Fatal(err)
			}
			opts.Overlap = true
			res2, err := writeRows(&overlap, rows, opts)
			if err != nil {
				t.Fatal(err)
			}
			if res != res2 || serial.Len() != overlap.Len() {
				t.Fatalf("overlap wrote %+v (%d bytes), serial %+v (%d bytes)", res2, overlap.Len(), res, serial.Len())
			}
			checkGroups(t, overlap.Bytes(), opts, res)
			checkReadBack(t, overlap.Bytes(), rows)
		})
	}
}

// checkGroups checks the row groups of a table file against opts.
func checkGroups(t *testing.T, b []byte, opts WriterOptions, res WriteResult) {
	t.Helper()
	rdr, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	if rdr.NumRowGroups() != res.RowGroups {
		t.Fatalf("file has %d row groups, result says %d", rdr.NumRowGroups(), res.RowGroups)
	}
	var total int64
	for i := range rdr.NumRowGroups() {
		n := rdr.MetaData().RowGroup(i).NumRows()
		total += n
		if opts.RowGroupRows > 0 && i < rdr.NumRowGroups()-1 && n != int64(opts.RowGroupRows) {
			t.Fatalf("row group %d has %d rows, want %d", i, n, opts.RowGroupRows)
		}
		if n == 0 {
			t.Fatalf("row group %d is empty", i)
		}
	}
	if total != res.Rows {
		t.Fatalf("row groups hold %d rows, result says %d", total, res.Rows)
	}
}

// checkReadBack reads a table file of benchTable and compares each row, in
// order, with rows: same NULLs, same canonical values.
func checkReadBack(t *testing.T, b []byte, rows *sqlRows) {
	t.Helper()
	tbl := benchTable()
	r, err := OpenTableFile(writeTemp(t, b))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := make([][]byte, rows.cols)
	for i := 0; ; i++ {
		got, err := r.Next()
		if err == io.EOF {
			if i != rows.len() {
				t.Fatalf("read %d rows, wrote %d", i, rows.len())
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		rows.row(i, want)
		for j := range got {
			c := &tbl.Columns[j]
			g, err := rowimage.AppendSQLValue(nil, c, got[j])
			if err != nil {
				t.Fatal(err)
			}
			w, _ := rowimage.AppendSQLValue(nil, c, rowimage.RawCell(want[j]))
			if got[j].Null != (want[j] == nil) || !bytes.Equal(g, w) {
				t.Fatalf("row %d column %s: read %s, wrote %s", i, c.Name, g, w)
			}
		}
	}
}

// failingWriter fails every write after the first n bytes.
type failingWriter struct{ n int }

var errDiskFull = errors.New("disk full")

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errDiskFull
	}
	f.n -= len(p)
	return len(p), nil
}

// TestOverlapWriteErrorIsReported: a write that fails in the writing
// goroutine fails a later append or Close, naming the table, and the writer
// stays failed.
func TestOverlapWriteErrorIsReported(t *testing.T) {
	rows := benchRowsSQL(100_000)
	_, err := writeRows(&failingWriter{n: 64 << 10}, rows, WriterOptions{RowGroupRows: 10_000, Overlap: true})
	if !errors.Is(err, errDiskFull) || !strings.Contains(err.Error(), "table shop.orders") {
		t.Fatalf("got %v, want the write error naming the table", err)
	}
}

// watchedWriter records a write made after its owner declared it done.
type watchedWriter struct {
	done, late atomic.Bool
}

func (w *watchedWriter) Write(p []byte) (int, error) {
	time.Sleep(time.Millisecond) // a slow disk: the writing goroutine lags behind
	if w.done.Load() {
		w.late.Store(true)
	}
	return len(p), nil
}

// TestAbortWaitsForTheWritingGoroutine: after Abort nothing more is written
// to the io.Writer (the caller may close or reuse it), and the writer
// refuses rows.
func TestAbortWaitsForTheWritingGoroutine(t *testing.T) {
	rows := benchRowsSQL(40_000)
	w := &watchedWriter{}
	tw, err := NewTableWriter(w, benchTable(), testMeta(), WriterOptions{RowGroupRows: 1_000, Overlap: true})
	if err != nil {
		t.Fatal(err)
	}
	row := make([][]byte, rows.cols)
	for i := range rows.len() {
		rows.row(i, row)
		if err := tw.AppendSQL(rowimage.RawCells(nil, row)); err != nil {
			t.Fatal(err)
		}
	}
	tw.Abort()
	w.done.Store(true)
	tw.Abort() // a second Abort does nothing
	if err := tw.AppendSQL(rowimage.RawCells(nil, row)); err == nil {
		t.Fatal("an aborted writer took a row")
	}
	if _, err := tw.Close(); err == nil {
		t.Fatal("an aborted writer closed")
	}
	if w.late.Load() {
		t.Fatal("the writing goroutine wrote after Abort returned")
	}
}
