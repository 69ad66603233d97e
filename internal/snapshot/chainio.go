package snapshot

import (
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// newStringColumns returns n non-nullable STRING columns for a TableWriter's
// extra columns.
func newStringColumns(n int) []column {
	cols := make([]column, n)
	for i := range cols {
		cols[i] = column{dt: arrow.BinaryTypes.String, offs: []int32{0}}
	}
	return cols
}

// putString appends a non-NULL string to a STRING column.
func (c *column) putString(v string) {
	c.data = append(c.data, v...)
	c.offs = append(c.offs, int32(len(c.data)))
	c.n++
}

// KeyedWriter writes a file of a table's rows, each with its key (the
// canonical key string, rowimage.Key) and an op (OpUpsert or OpDelete) in two
// STRING columns after the table's: a .upserts file (NewUpsertsWriter) or a
// scratch file of the same form under other column names. The footer is a
// table file's (FooterMeta), its row count and fingerprint those of the rows
// written. It holds at most one row group in memory.
type KeyedWriter struct {
	tw *TableWriter
}

// NewUpsertsWriter starts a .upserts file of t: UpsertsSchema(t), i.e. the
// table's columns then bintrail_pk and bintrail_op. It is ErrFullOnly for a
// table that is always written in full.
func NewUpsertsWriter(w io.Writer, t *schema.Table, meta FooterMeta, opts WriterOptions) (*KeyedWriter, error) {
	if FullOnly(t) {
		return nil, fmt.Errorf("table %s: %w", t.QualifiedName(), ErrFullOnly)
	}
	return NewKeyedWriter(w, t, meta, opts, ColPK, ColOp)
}

// NewKeyedWriter starts a keyed file whose key and op columns are named
// keyCol and opCol; a table column of either name (case-insensitively) is an
// error.
func NewKeyedWriter(w io.Writer, t *schema.Table, meta FooterMeta, opts WriterOptions, keyCol, opCol string) (*KeyedWriter, error) {
	tw, err := newTableWriter(w, t, meta, opts, []string{keyCol, opCol})
	if err != nil {
		return nil, err
	}
	return &KeyedWriter{tw: tw}, nil
}

// AppendSQL appends a row in TableWriter.AppendSQL's form with its key and
// op.
func (k *KeyedWriter) AppendSQL(row []rowimage.Cell, key, op string) error {
	if op != OpUpsert && op != OpDelete {
		return fmt.Errorf("table %s: op %q", k.tw.t.QualifiedName(), op)
	}
	return k.tw.appendSQL(row, []string{key, op})
}

// AppendImage appends a row given as a canonical JSON image (see
// TableWriter.AppendImage) with its key and op.
func (k *KeyedWriter) AppendImage(image []byte, key, op string) error {
	row, err := k.tw.imageRow(image)
	if err != nil {
		return err
	}
	return k.AppendSQL(row, key, op)
}

// Rows returns the rows appended so far.
func (k *KeyedWriter) Rows() int64 { return k.tw.Rows() }

// Close flushes and writes the footer.
func (k *KeyedWriter) Close() (WriteResult, error) { return k.tw.Close() }

// PosdelWriter writes a .posdel file: one INT64 column "row", the row
// numbers (0-based) of a table file that are no longer current.
type PosdelWriter struct {
	fw   interface{ Write(arrow.RecordBatch) error }
	cl   func() error
	sc   *arrow.Schema
	b    *array.Int64Builder
	n    int64
	cw   *countingWriter
	done bool
}

// posdelGroupRows bounds a .posdel row group (8 MiB of values).
const posdelGroupRows = 1 << 20

// NewPosdelWriter starts a .posdel file on w (never closed by the writer).
func NewPosdelWriter(w io.Writer) (*PosdelWriter, error) {
	sc := PosdelSchema()
	cw := &countingWriter{w: w}
	fw, err := newParquetWriter(sc, cw, WriterOptions{RowGroupRows: posdelGroupRows})
	if err != nil {
		return nil, err
	}
	return &PosdelWriter{fw: fw, cl: fw.Close, sc: sc, b: array.NewInt64Builder(memory.DefaultAllocator), cw: cw}, nil
}

// Append adds one row number.
func (p *PosdelWriter) Append(row int64) error {
	if p.done {
		return fmt.Errorf("append to a closed posdel writer")
	}
	if row < 0 {
		return fmt.Errorf("posdel: negative row number %d", row)
	}
	p.b.Append(row)
	p.n++
	if p.b.Len() >= posdelGroupRows {
		return p.flush()
	}
	return nil
}

func (p *PosdelWriter) flush() error {
	if p.b.Len() == 0 {
		return nil
	}
	arr := p.b.NewArray()
	rec := array.NewRecordBatch(p.sc, []arrow.Array{arr}, int64(arr.Len()))
	arr.Release()
	defer rec.Release()
	if err := p.fw.Write(rec); err != nil {
		return fmt.Errorf("posdel: write row group: %w", err)
	}
	return nil
}

// Rows returns the row numbers appended so far.
func (p *PosdelWriter) Rows() int64 { return p.n }

// Close flushes and finishes the file; it returns the bytes written.
func (p *PosdelWriter) Close() (int64, error) {
	if p.done {
		return 0, fmt.Errorf("posdel writer already closed")
	}
	p.done = true
	if err := p.flush(); err != nil {
		return 0, err
	}
	if err := p.cl(); err != nil {
		return 0, fmt.Errorf("posdel: close: %w", err)
	}
	return p.cw.n, nil
}

// OpenUpsertsFile opens a .upserts file (no digest check: the caller reads
// it from a verified snapshot or from its own scratch). Next returns each
// row's table values; Keyed its key and op.
func OpenUpsertsFile(path string) (*TableReader, error) {
	return OpenKeyedFile(path, ColPK, ColOp)
}

// OpenKeyedFile opens a file NewKeyedWriter wrote with the key and op columns
// keyCol and opCol.
func OpenKeyedFile(path string, keyCol, opCol string) (*TableReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open keyed file: %w", err)
	}
	r, err := newKeyedReader(f, []string{keyCol, opCol})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open keyed file %s: %w", path, err)
	}
	return r, nil
}

// Keyed returns the key and op of the row Next returned last, for a reader
// of a keyed file (OpenKeyedFile); ok is false for a table file.
func (r *TableReader) Keyed() (key, op string, ok bool) {
	if r.rec == nil || r.row == 0 || int(r.rec.NumCols()) < r.ncols+2 {
		return "", "", false
	}
	k := r.rec.Column(r.ncols).(*array.String)
	o := r.rec.Column(r.ncols + 1).(*array.String)
	return k.Value(r.row - 1), o.Value(r.row - 1), true
}
