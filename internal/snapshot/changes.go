package snapshot

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// ChangesWriterVersion identifies the changes file format.
const ChangesWriterVersion = "changes/1"

// Columns of a changes file before the table's (docs/time-travel.md).
const (
	ChangesColSeq        = "seq"
	ChangesColOp         = "op"
	ChangesColCommitTime = "commit_time"
	ChangesColGTID       = "gtid"
	ChangesColFile       = "binlog_file"
	ChangesColEndPos     = "end_pos"
	ChangesColPK         = "pk"
	ChangesColPKBefore   = "pk_before"
	// ChangesBefore and ChangesAfter prefix each table column's before and
	// after value: before_<column>, after_<column>.
	ChangesBefore = "before_"
	ChangesAfter  = "after_"
)

// Footer keys of a changes file beside KeyCreateTable, KeySource,
// KeyWriterVersion, KeyRowCount and KeyTable.
const (
	KeySchemaName    = "dbtrail.schema_name"
	KeyTableName     = "dbtrail.table_name"
	KeyFirstPosition = "dbtrail.first_position" // JSON Position of the file's first change ({} when none)
	KeyLastPosition  = "dbtrail.last_position"  // JSON Position of its last change
	KeyFirstCommit   = "dbtrail.first_commit"   // RFC 3339 UTC commit time of the first change
	KeyLastCommit    = "dbtrail.last_commit"
)

// Change is one row change as a changes file stores it: an index event.
// Op is 'i', 'u' or 'd'; Before and After are canonical JSON images (nil:
// none), PKBefore the old key of an update that changed the key.
type Change struct {
	Seq        uint64
	Op         byte
	CommitTime time.Time
	GTID       string
	BinlogFile string
	EndPos     uint64
	PK         string
	PKBefore   string
	Before     []byte
	After      []byte
}

// ChangesMeta is the footer of a changes file given by its writer's
// caller: the source, the CREATE TABLE of the shape, and more pairs (the
// time range, the export time) written in order after the others.
type ChangesMeta struct {
	Source      string
	CreateTable string
	Extra       [][2]string
}

// ChangesSchema returns the Arrow schema of a changes file of t: seq
// (UINT64), op (STRING: insert, update, delete), commit_time (TIMESTAMP in
// microseconds, UTC), gtid (STRING, null when none), binlog_file (STRING),
// end_pos (UINT64), pk and pk_before (STRING, the canonical key text;
// pk_before null unless an update changed the key), then before_<column>
// and after_<column> for each of t's columns, typed as in a table file
// (ArrowSchema), null where the change has no image.
func ChangesSchema(t *schema.Table) (*arrow.Schema, error) {
	tbl, err := ArrowSchema(t)
	if err != nil {
		return nil, err
	}
	fields := []arrow.Field{
		{Name: ChangesColSeq, Type: arrow.PrimitiveTypes.Uint64},
		{Name: ChangesColOp, Type: arrow.BinaryTypes.String},
		{Name: ChangesColCommitTime, Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
		{Name: ChangesColGTID, Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: ChangesColFile, Type: arrow.BinaryTypes.String},
		{Name: ChangesColEndPos, Type: arrow.PrimitiveTypes.Uint64},
		{Name: ChangesColPK, Type: arrow.BinaryTypes.String},
		{Name: ChangesColPKBefore, Type: arrow.BinaryTypes.String, Nullable: true},
	}
	for _, prefix := range []string{ChangesBefore, ChangesAfter} {
		for _, f := range tbl.Fields() {
			f.Name = prefix + f.Name
			fields = append(fields, f)
		}
	}
	return arrow.NewSchema(fields, nil), nil
}

// imageCols are one image's typed columns of a changes file.
type imageCols struct {
	t       *schema.Table
	cols    []column
	vals    []value
	dec     imageDecoder
	canon   []byte
	scratch []byte
}

// parse decodes image (nil: every column NULL) into vals; row n is for
// errors. Nothing is appended to the columns: put does that.
func (ic *imageCols) parse(image []byte, n int64) (int, error) {
	canon, scratch := ic.canon[:0], ic.scratch[:0]
	if image == nil {
		for i := range ic.vals {
			ic.vals[i] = value{null: true}
		}
		return 0, nil
	}
	row, err := ic.dec.decode(ic.t, n, image)
	if err != nil {
		return 0, err
	}
	for i, v := range row {
		if v.Null {
			ic.vals[i] = value{null: true}
			continue
		}
		if canon, err = ic.cols[i].appendSQL(canon, v, &scratch, &ic.vals[i]); err != nil {
			var ve *rowimage.ValueError
			if errors.As(err, &ve) {
				err = ve.Err
			}
			return 0, &RowError{Table: ic.t.QualifiedName(), Column: ic.t.Columns[i].Name, Row: n, Value: abbreviate(v.Text), Err: err}
		}
	}
	ic.canon, ic.scratch = canon, scratch
	return len(canon) + len(scratch), nil
}

func (ic *imageCols) put() {
	for i := range ic.cols {
		ic.cols[i].put(&ic.vals[i], ic.canon, ic.scratch)
	}
}

// ChangesWriter writes a changes file: one row per change of one table
// shape, streamed. A row group is encoded and compressed by a goroutine of
// the writer while the next one is filled, so at most two row groups are in
// memory. Not safe for concurrent use.
type ChangesWriter struct {
	t      *schema.Table
	meta   ChangesMeta
	opts   WriterOptions
	sc     *arrow.Schema
	cw     *countingWriter
	fw     *pqarrow.FileWriter
	sets   [2]*changesCols // the row group being filled, and the one written
	cur    int
	before imageCols
	after  imageCols
	rows   int64
	groupN int
	groupB int
	groups int
	first  Change
	last   Change
	err    error
	closed bool
	// The row group writer: jobs takes a row group to write, done answers
	// for each; busy is set while one is written.
	jobs chan *arrow.RecordBatch
	done chan error
	busy bool
}

// changesCols is one row group's column buffers.
type changesCols struct {
	head          []column // seq, op, commit_time, gtid, binlog_file, end_pos, pk, pk_before
	before, after []column
}

func (cc *changesCols) all() []*column {
	out := make([]*column, 0, len(cc.head)+len(cc.before)+len(cc.after))
	for _, cols := range [][]column{cc.head, cc.before, cc.after} {
		for i := range cols {
			out = append(out, &cols[i])
		}
	}
	return out
}

// NewChangesWriter starts a changes file of t (a stored definition: its
// generated columns' values are skipped in images) on w.
func NewChangesWriter(w io.Writer, t *schema.Table, meta ChangesMeta, opts WriterOptions) (*ChangesWriter, error) {
	sc, err := ChangesSchema(t)
	if err != nil {
		return nil, err
	}
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = DefaultRowGroupRows
	}
	if opts.RowGroupBytes <= 0 {
		opts.RowGroupBytes = DefaultRowGroupBytes
	}
	cw := &countingWriter{w: w}
	// seq, end_pos and the keys are (nearly) unique per change: a
	// dictionary of them costs time and saves nothing.
	fw, err := newParquetWriter(sc, cw, opts, parquet.WithDictionaryFor(ChangesColSeq, false),
		parquet.WithDictionaryFor(ChangesColEndPos, false), parquet.WithDictionaryFor(ChangesColPK, false),
		parquet.WithDictionaryFor(ChangesColPKBefore, false))
	if err != nil {
		return nil, fmt.Errorf("changes of %s: %w", t.QualifiedName(), err)
	}
	c := &ChangesWriter{t: t, meta: meta, opts: opts, sc: sc, cw: cw, fw: fw,
		jobs: make(chan *arrow.RecordBatch), done: make(chan error)}
	tbl := arrow.NewSchema(sc.Fields()[8:8+len(t.Columns)], nil)
	for i := range c.sets {
		cc := &changesCols{before: newColumns(t, tbl), after: newColumns(t, tbl)}
		for j := 0; j < 8; j++ {
			f := sc.Field(j)
			width := 0
			if fwt, ok := f.Type.(arrow.FixedWidthDataType); ok {
				width = fwt.BitWidth() / 8
			}
			cc.head = append(cc.head, column{dt: f.Type, width: width, offs: []int32{0}})
		}
		c.sets[i] = cc
	}
	for _, ic := range []*imageCols{&c.before, &c.after} {
		ic.t, ic.vals = t, make([]value, len(t.Columns))
	}
	c.before.cols, c.after.cols = c.sets[0].before, c.sets[0].after
	go c.writeGroups()
	return c, nil
}

// writeGroups writes the row groups jobs hands it, answering on done.
func (c *ChangesWriter) writeGroups() {
	for rec := range c.jobs {
		err := c.fw.Write(*rec)
		(*rec).Release()
		c.done <- err
	}
}

// opNames are the op column's values.
var opNames = map[byte]string{'i': "insert", 'u': "update", 'd': "delete"}

// Append adds one change. A malformed or unstorable image value is a
// *RowError naming the column and the change's seq; the change is not
// written and the writer stays usable.
func (c *ChangesWriter) Append(ch Change) error {
	if c.err != nil {
		return c.err
	}
	if c.closed {
		return errors.New("append to a closed changes writer")
	}
	op, ok := opNames[ch.Op]
	if !ok {
		return fmt.Errorf("changes of %s: seq %d: unknown op %q", c.t.QualifiedName(), ch.Seq, ch.Op)
	}
	wrap := func(err error) error {
		var re *RowError
		if errors.As(err, &re) {
			return fmt.Errorf("seq %d: %w", ch.Seq, err)
		}
		return fmt.Errorf("changes of %s: seq %d: %w", c.t.QualifiedName(), ch.Seq, err)
	}
	nb, err := c.before.parse(ch.Before, c.rows+1)
	if err != nil {
		return wrap(err)
	}
	na, err := c.after.parse(ch.After, c.rows+1)
	if err != nil {
		return wrap(err)
	}
	rowBytes := nb + na + len(ch.PK) + len(ch.PKBefore) + len(ch.GTID) + len(ch.BinlogFile) + 40
	if c.groupN > 0 && c.groupB+rowBytes > math.MaxInt32/2 {
		if err := c.flush(); err != nil {
			return err
		}
	}
	ne := binary.NativeEndian
	h := c.sets[c.cur].head
	putU64 := func(col *column, v uint64) {
		c.validBit(col)
		col.fixed = ne.AppendUint64(col.fixed, v)
	}
	putStr := func(col *column, v string, null bool) {
		if null {
			if col.n&7 == 0 {
				col.valid = append(col.valid, 0)
			}
			col.nulls++
			col.offs = append(col.offs, int32(len(col.data)))
			col.n++
			return
		}
		c.validBit(col)
		col.data = append(col.data, v...)
		col.offs = append(col.offs, int32(len(col.data)))
	}
	putU64(&h[0], ch.Seq)
	putStr(&h[1], op, false)
	putU64(&h[2], uint64(ch.CommitTime.UnixMicro()))
	putStr(&h[3], ch.GTID, ch.GTID == "")
	putStr(&h[4], ch.BinlogFile, false)
	putU64(&h[5], ch.EndPos)
	putStr(&h[6], ch.PK, false)
	putStr(&h[7], ch.PKBefore, ch.PKBefore == "")
	c.before.put()
	c.after.put()
	if c.rows == 0 {
		c.first = ch
	}
	c.last = ch
	c.rows++
	c.groupN++
	c.groupB += rowBytes
	if c.groupN >= c.opts.RowGroupRows || c.groupB >= c.opts.RowGroupBytes {
		return c.flush()
	}
	return nil
}

// validBit appends a set validity bit for the column's next value.
func (c *ChangesWriter) validBit(col *column) {
	if col.n&7 == 0 {
		col.valid = append(col.valid, 0)
	}
	col.valid[col.n>>3] |= 1 << (col.n & 7)
	col.n++
}

// Rows returns the changes appended so far.
func (c *ChangesWriter) Rows() int64 { return c.rows }

// flush hands the filled row group to the writer goroutine and switches to
// the other column buffers, after the goroutine finished writing them.
func (c *ChangesWriter) flush() error {
	if c.groupN == 0 {
		return nil
	}
	if err := c.wait(); err != nil {
		return err
	}
	cols := c.sets[c.cur].all()
	arrs := make([]arrow.Array, len(cols))
	for i, col := range cols {
		arrs[i] = col.newArray()
	}
	rec := array.NewRecordBatch(c.sc, arrs, int64(c.groupN))
	for _, a := range arrs {
		a.Release()
	}
	c.jobs <- &rec
	c.busy = true
	c.cur = 1 - c.cur
	next := c.sets[c.cur]
	for _, col := range next.all() {
		col.reset()
	}
	c.before.cols, c.after.cols = next.before, next.after
	c.groups++
	c.groupN, c.groupB = 0, 0
	return nil
}

// wait waits for the row group being written, if any.
func (c *ChangesWriter) wait() error {
	if !c.busy {
		return nil
	}
	c.busy = false
	if err := <-c.done; err != nil {
		c.err = fmt.Errorf("changes of %s: write row group: %w", c.t.QualifiedName(), err)
		return c.err
	}
	return nil
}

// stop ends the writer goroutine after the row group in flight.
func (c *ChangesWriter) stop() error {
	err := c.wait()
	if c.jobs != nil {
		close(c.jobs)
		c.jobs = nil
	}
	return err
}

// Abort stops the writer without finishing the file (what was written is
// not a valid file); Close must not be called after it.
func (c *ChangesWriter) Abort() {
	if c.closed {
		return
	}
	c.closed = true
	c.stop()
}

// Close flushes the last row group and writes the footer: the keys of
// ChangesMeta, the table's schema and table names and definition, the row
// count, and the position and commit time of the first and last change.
func (c *ChangesWriter) Close() (WriteResult, error) {
	if c.closed {
		return WriteResult{}, errors.New("changes writer already closed")
	}
	c.closed = true
	if c.err != nil {
		c.stop()
		return WriteResult{}, c.err
	}
	err := c.flush()
	if serr := c.stop(); err == nil {
		err = serr
	}
	if err != nil {
		return WriteResult{}, err
	}
	tbl, err := json.Marshal(c.t)
	if err != nil {
		return WriteResult{}, err
	}
	posJSON := func(ch Change) string {
		if c.rows == 0 {
			return "{}"
		}
		b, _ := json.Marshal(binlogpos.Position{File: ch.BinlogFile, Pos: ch.EndPos, GTID: ch.GTID, Seq: ch.Seq})
		return string(b)
	}
	commit := func(ch Change) string {
		if c.rows == 0 {
			return ""
		}
		return ch.CommitTime.UTC().Format(time.RFC3339Nano)
	}
	kv := [][2]string{
		{KeyWriterVersion, ChangesWriterVersion},
		{KeySource, c.meta.Source},
		{KeySchemaName, c.t.Schema},
		{KeyTableName, c.t.Name},
		{KeyCreateTable, c.meta.CreateTable},
		{KeyTable, string(tbl)},
		{KeyRowCount, strconv.FormatInt(c.rows, 10)},
		{KeyFirstPosition, posJSON(c.first)},
		{KeyLastPosition, posJSON(c.last)},
		{KeyFirstCommit, commit(c.first)},
		{KeyLastCommit, commit(c.last)},
	}
	for _, p := range append(kv, c.meta.Extra...) {
		if err := c.fw.AppendKeyValueMetadata(p[0], p[1]); err != nil {
			return WriteResult{}, fmt.Errorf("changes of %s: footer: %w", c.t.QualifiedName(), err)
		}
	}
	if err := c.fw.Close(); err != nil {
		return WriteResult{}, fmt.Errorf("changes of %s: close: %w", c.t.QualifiedName(), err)
	}
	return WriteResult{Rows: c.rows, RowGroups: c.groups, Bytes: c.cw.n}, nil
}
