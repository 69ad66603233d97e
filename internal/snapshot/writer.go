package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/cespare/xxhash/v2"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// Row group bounds: a row group is flushed at whichever comes first.
const (
	DefaultRowGroupRows  = 128 * 1024
	DefaultRowGroupBytes = 64 << 20
)

// WriterOptions tune a TableWriter. The zero value is the default.
type WriterOptions struct {
	// RowGroupRows and RowGroupBytes bound a row group (and the writer's
	// memory): defaults DefaultRowGroupRows and DefaultRowGroupBytes. Bytes
	// are estimated from the canonical value sizes.
	RowGroupRows  int
	RowGroupBytes int
	// ZstdLevel is the zstd compression level; 0 is the codec's default.
	ZstdLevel int
	// Allocator for the Parquet writer's buffers; nil is the Go allocator.
	// (A row group's values are handed to the Parquet writer as Arrow
	// columns held in Go slices, reused from row group to row group.)
	Allocator memory.Allocator
	// Overlap writes the row groups (Parquet encoding and zstd) in a goroutine
	// of the writer's own while the caller appends the next rows, so that
	// building rows and writing them use two cores. The file holds the same
	// row groups and pages, written in the same order. A writer with
	// Overlap must be ended by Close or Abort, or its goroutine outlives it.
	Overlap bool
	// Scratch writes a file that is read back once on this machine (a
	// restore's staged table): no dictionary encoding and no compression,
	// which cost most of a write's CPU and buy nothing there. The file is
	// a table file like any other, two to four times larger.
	Scratch bool
}

// WriteResult describes a closed table file.
type WriteResult struct {
	Rows        int64
	Fingerprint Fingerprint
	RowGroups   int
	Bytes       int64 // bytes written to the io.Writer
}

// RowError reports a value of a row that cannot be stored. It is never turned
// into NULL. Row is 1-based within the file.
type RowError struct {
	Table  string // schema.table
	Column string
	Row    int64
	Value  string // abbreviated, quoted
	Err    error
}

func (e *RowError) Error() string {
	return fmt.Sprintf("table %s row %d column %s value %s: %v", e.Table, e.Row, e.Column, e.Value, e.Err)
}

func (e *RowError) Unwrap() error { return e.Err }

// abbreviate quotes v, cut to 64 bytes.
func abbreviate(v []byte) string {
	if len(v) > 64 {
		return fmt.Sprintf("%q… (%d bytes)", v[:64], len(v))
	}
	return fmt.Sprintf("%q", v)
}

// TableWriter writes one table file: Parquet, zstd, one row group per
// RowGroupRows/RowGroupBytes, with the footer key-value metadata of
// FooterMeta. It holds the row group being built as Arrow columns, and with
// Overlap the one being written (see slices.go). It is not safe for
// concurrent use.
type TableWriter struct {
	t       *schema.Table
	meta    FooterMeta
	opts    WriterOptions
	sc      *arrow.Schema
	cw      *countingWriter
	fw      *pqarrow.FileWriter
	cur     *slice      // the slice being built
	over    *overlapper // Overlap: writes the built slices; nil otherwise
	vals    []value
	nExtra  int    // STRING columns after the table's (chain files)
	canon   []byte // hash framing + canonical values of the current row
	scratch []byte // decoded bytes of the current row
	sizes   []int  // Overlap: the buffer sizes of the last row group
	// byteArray and binary mark the columns stored as Parquet byte arrays
	// (Arrow String or Binary) and those of them that are binary.
	byteArray, binary []bool
	// byteArrays and binaries are the PLAIN-encoded bytes (4-byte length
	// and value) of the rows' non-NULL values of those columns: the
	// footer's KeyByteArrayBytes and KeyBinaryBytes.
	byteArrays, binaries int64
	fp                   Fingerprint
	groupN               int
	groupB               int
	groups               int
	err                  error // sticky: a failed write ends the writer
	closed               bool
}

// NewTableWriter starts a table file of t on w. meta's CreateTable, Position,
// SnapshotID, Source and WriterVersion (default WriterVersion) go to the
// footer at Close; its Rows, Fingerprint and Table are ignored (Close fills
// them in). w is never closed by the TableWriter.
func NewTableWriter(w io.Writer, t *schema.Table, meta FooterMeta, opts WriterOptions) (*TableWriter, error) {
	return newTableWriter(w, t, meta, opts, nil)
}

// newTableWriter is NewTableWriter with non-nullable STRING columns named
// extra after the table's (the chain files' key and op columns).
func newTableWriter(w io.Writer, t *schema.Table, meta FooterMeta, opts WriterOptions, extra []string) (*TableWriter, error) {
	sc, err := ArrowSchema(t)
	if err != nil {
		return nil, err
	}
	if len(extra) > 0 {
		fields := sc.Fields()
		for _, name := range extra {
			for _, f := range fields {
				if strings.EqualFold(f.Name, name) {
					return nil, fmt.Errorf("table %s: column %s collides with the chain column %s", t.QualifiedName(), f.Name, name)
				}
			}
			fields = append(fields, arrow.Field{Name: name, Type: arrow.BinaryTypes.String})
		}
		sc = arrow.NewSchema(fields, nil)
	}
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = DefaultRowGroupRows
	}
	if opts.RowGroupBytes <= 0 {
		opts.RowGroupBytes = DefaultRowGroupBytes
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	cw := &countingWriter{w: w}
	fw, err := newParquetWriter(sc, cw, opts, DictionaryProperties(t, sc)...)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.QualifiedName(), err)
	}
	tw := &TableWriter{t: t, meta: meta, opts: opts, sc: sc, cw: cw, fw: fw,
		vals: make([]value, len(t.Columns)), nExtra: len(extra), byteArray: make([]bool, len(t.Columns)), binary: make([]bool, len(t.Columns))}
	for i := range tw.binary {
		dt := sc.Field(i).Type
		tw.binary[i] = arrow.TypeEqual(dt, arrow.BinaryTypes.Binary)
		tw.byteArray[i] = tw.binary[i] || arrow.TypeEqual(dt, arrow.BinaryTypes.String)
	}
	tw.cur = newSlice(tw, len(extra))
	if opts.Overlap {
		slices := []*slice{}
		for range overlapSlices - 1 {
			slices = append(slices, newSlice(tw, len(extra)))
		}
		tw.over = startOverlapper(fw, slices)
	}
	return tw, nil
}

// dictionaryPageLimit bounds a column chunk's dictionary: past it the
// column falls back to plain pages. Parquet's usual 1 MiB holds a whole row
// group of distinct BIGINTs, so a column of distinct values paid for a
// dictionary larger than its plain pages on every row group (a quarter of
// a table rewrite's CPU went to growing those hash tables); 256 KiB keeps
// dictionaries for columns of up to 32,768 distinct 8-byte values.
const dictionaryPageLimit = 256 << 10

// DictionaryProperties are the dictionary settings of t's table files
// (arrow schema sc): dictionaries bounded by dictionaryPageLimit, and none
// for a one-column key, whose values are distinct by definition, so that
// a dictionary only costs.
func DictionaryProperties(t *schema.Table, sc *arrow.Schema) []parquet.WriterProperty {
	pp := []parquet.WriterProperty{parquet.WithDictionaryPageSizeLimit(dictionaryPageLimit)}
	idx, err := t.KeyIndexes()
	if err != nil || len(idx) != 1 || idx[0] >= sc.NumFields() {
		return pp
	}
	return append(pp, parquet.WithDictionaryFor(sc.Field(idx[0]).Name, false))
}

// newParquetWriter opens a zstd Parquet writer that stores the Arrow schema
// (so field metadata survives).
func newParquetWriter(sc *arrow.Schema, w io.Writer, opts WriterOptions, more ...parquet.WriterProperty) (*pqarrow.FileWriter, error) {
	codec := compress.Codecs.Zstd
	if opts.Scratch {
		codec = compress.Codecs.Uncompressed
		more = append(more, parquet.WithDictionaryDefault(false))
	}
	pp := append([]parquet.WriterProperty{
		parquet.WithCompression(codec),
		parquet.WithMaxRowGroupLength(int64(max(opts.RowGroupRows, 1))),
		parquet.WithDictionaryPageSizeLimit(dictionaryPageLimit),
		parquet.WithCreatedBy("dbtrail " + WriterVersion),
	}, more...)
	if opts.ZstdLevel != 0 && !opts.Scratch {
		pp = append(pp, parquet.WithCompressionLevel(opts.ZstdLevel))
	}
	if opts.Allocator != nil {
		pp = append(pp, parquet.WithAllocator(opts.Allocator))
	}
	return pqarrow.NewFileWriter(sc, w, parquet.NewWriterProperties(pp...),
		pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
}

// AppendSQL appends one row given in the SQL text form of rowimage.AppendSQLValue
// (one rowimage.Cell per column in table order; NULL only where Cell.Null). Each value is first
// canonicalised with rowimage.AppendSQLValue (which also feeds the row's
// RowHash), then decoded into the column's Parquet type. A value that cannot
// be converted is a *RowError and the row is not written; the writer stays
// usable. The row's slices are not retained.
func (tw *TableWriter) AppendSQL(row []rowimage.Cell) error { return tw.appendSQL(row, nil) }

// appendSQL is AppendSQL with the values of the extra columns.
func (tw *TableWriter) appendSQL(row []rowimage.Cell, extra []string) error {
	if len(extra) != tw.nExtra {
		return fmt.Errorf("table %s row %d: %d chain values for %d chain columns", tw.t.QualifiedName(), tw.fp.Rows+1, len(extra), tw.nExtra)
	}
	if tw.err != nil {
		return tw.err
	}
	if tw.closed {
		return errors.New("append to a closed table writer")
	}
	if len(row) != len(tw.vals) {
		return fmt.Errorf("table %s row %d: %d values for %d columns", tw.t.QualifiedName(), tw.fp.Rows+1, len(row), len(tw.vals))
	}
	cols := tw.cur.cols
	canon, scratch := tw.canon[:0], tw.scratch[:0]
	var byteArrays, binaries int
	for i, v := range row {
		if v.Null {
			canon = binary.LittleEndian.AppendUint32(canon, nullMarker)
			tw.vals[i] = value{null: true}
			continue
		}
		at := len(canon)
		canon = append(canon, 0, 0, 0, 0)
		var err error
		if canon, err = cols[i].appendSQL(canon, v, &scratch, &tw.vals[i]); err == nil {
			binary.LittleEndian.PutUint32(canon[at:], uint32(len(canon)-at-4))
			if tw.byteArray[i] {
				byteArrays += len(canon) - at
				if tw.binary[i] {
					binaries += len(canon) - at
				}
			}
		}
		if err != nil {
			tw.canon, tw.scratch = canon[:0], scratch[:0]
			return tw.rowErr(i, v.Text, err)
		}
	}
	rowBytes := len(canon) + len(scratch) // bounds every column's share
	for _, e := range extra {
		rowBytes += len(e)
	}
	if rowBytes > math.MaxInt32 {
		return fmt.Errorf("table %s row %d: row of %d bytes is too large", tw.t.QualifiedName(), tw.fp.Rows+1, rowBytes)
	}
	if tw.cur.n > 0 && tw.cur.bytes+rowBytes > math.MaxInt32 {
		if err := tw.endGroup(); err != nil { // Arrow offsets are int32
			return err
		}
	}
	tw.put(canon, scratch, extra, rowBytes)
	tw.byteArrays, tw.binaries = tw.byteArrays+int64(byteArrays), tw.binaries+int64(binaries)
	tw.fp.Add(xxhash.Sum64(canon))
	tw.canon, tw.scratch = canon, scratch
	if tw.groupN >= tw.opts.RowGroupRows || tw.groupB >= tw.opts.RowGroupBytes {
		return tw.endGroup()
	}
	return nil
}

// endGroup ends the row group: the next row starts another.
func (tw *TableWriter) endGroup() error {
	tw.groupN, tw.groupB = 0, 0
	return tw.cut()
}

// put appends the parsed row to the current slice, its row group (a row
// group's first row starts it).
func (tw *TableWriter) put(canon, scratch []byte, extra []string, rowBytes int) {
	s := tw.cur
	if tw.groupN == 0 {
		tw.groups++
	}
	for i := range tw.vals {
		s.cols[i].put(&tw.vals[i], canon, scratch)
	}
	for i, e := range extra {
		s.cols[len(tw.vals)+i].putString(e)
	}
	s.n++
	s.bytes += rowBytes
	tw.groupN++
	tw.groupB += rowBytes
}

func (tw *TableWriter) rowErr(i int, raw []byte, err error) error {
	var ve *rowimage.ValueError
	if errors.As(err, &ve) {
		err = ve.Err // the RowError names the column itself
	}
	return &RowError{Table: tw.t.QualifiedName(), Column: tw.t.Columns[i].Name, Row: tw.fp.Rows + 1, Value: abbreviate(raw), Err: err}
}

// cut hands the current slice to the Parquet writer: written at once, or
// with Overlap queued for the writing goroutine in exchange for an empty
// slice. A write error is sticky.
func (tw *TableWriter) cut() error {
	if tw.cur.n == 0 {
		return nil
	}
	if tw.over == nil {
		if err := writeSlice(tw.fw, tw.cur); err != nil {
			tw.err = sliceWriteErr(tw.t.QualifiedName(), err)
			return tw.err
		}
		return nil
	}
	if err := tw.over.failed(); err != nil {
		tw.err = sliceWriteErr(tw.t.QualifiedName(), err)
		return tw.err
	}
	tw.sizes = tw.cur.sizes(tw.sizes[:0]) // before the writing goroutine owns it
	tw.cur = tw.over.swap(tw.cur)
	tw.cur.reserve(tw.sizes)
	return nil
}

// drain writes the current slice and, with Overlap, waits for every slice
// to be written and ends the writing goroutine.
func (tw *TableWriter) drain() error {
	err := tw.cut()
	if tw.over != nil {
		over := tw.over
		tw.over = nil
		if werr := over.stop(); werr != nil && err == nil {
			err = sliceWriteErr(tw.t.QualifiedName(), werr)
		}
	}
	if err != nil {
		tw.err = err
	}
	return err
}

// Abort ends a writer that will not be closed (the caller failed): with
// Overlap it waits for the writing goroutine to end, so nothing is written
// to the io.Writer after Abort returns. The file is left incomplete.
// Abort after Close or Abort does nothing.
func (tw *TableWriter) Abort() {
	if tw.closed {
		return
	}
	tw.closed = true
	if tw.over != nil {
		tw.over.stop()
		tw.over = nil
	}
}

// Rows returns the number of rows appended so far.
func (tw *TableWriter) Rows() int64 { return tw.fp.Rows }

// Groups returns the number of row groups started so far: a row whose
// AppendSQL raised it is the first row of row group Groups()-1.
func (tw *TableWriter) Groups() int { return tw.groups }

// Close flushes the last row group and writes the footer with the metadata of
// FooterMeta (see FooterKeys). It does not close the io.Writer. A TableWriter
// whose append failed with a write error cannot be closed successfully.
func (tw *TableWriter) Close() (WriteResult, error) {
	if tw.closed {
		return WriteResult{}, errors.New("table writer already closed")
	}
	if tw.err != nil {
		tw.Abort()
		return WriteResult{}, tw.err
	}
	tw.closed = true
	if err := tw.drain(); err != nil {
		return WriteResult{}, err
	}
	meta := tw.meta
	meta.Rows, meta.Fingerprint, meta.Table = tw.fp.Rows, tw.fp, tw.t
	kv, err := meta.keyValues()
	if err != nil {
		return WriteResult{}, fmt.Errorf("table %s: %w", tw.t.QualifiedName(), err)
	}
	kv = append(kv, [2]string{KeyByteArrayBytes, strconv.FormatInt(tw.byteArrays, 10)},
		[2]string{KeyBinaryBytes, strconv.FormatInt(tw.binaries, 10)})
	for _, p := range kv {
		if err := tw.fw.AppendKeyValueMetadata(p[0], p[1]); err != nil {
			return WriteResult{}, fmt.Errorf("table %s: footer: %w", tw.t.QualifiedName(), err)
		}
	}
	if err := tw.fw.Close(); err != nil {
		return WriteResult{}, fmt.Errorf("table %s: close: %w", tw.t.QualifiedName(), err)
	}
	return WriteResult{Rows: tw.fp.Rows, Fingerprint: tw.fp, RowGroups: tw.groups, Bytes: tw.cw.n}, nil
}

// countingWriter counts bytes and hides any Close method of w (pqarrow closes
// an io.Closer it writes to).
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
