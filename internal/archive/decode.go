package archive

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/dbtrail/dbtrail/internal/change"
)

// batchRows is how many rows the Reader decodes at a time.
const batchRows = 4096

// decoder turns the column chunks of one checked row group into events,
// batch by batch, checking each row against the footer as it goes: the
// group's schema and table, seqs growing within the group's range, commit
// times within the hour, a known op.
type decoder struct {
	g      *rowGroupEntry
	t      *TableCount
	lo, hi int64 // the hour in µs since the epoch, [lo, hi)
	ints   [numColumns]*file.Int64ColumnChunkReader
	ver    *file.Int32ColumnChunkReader
	bytes  [numColumns]*file.ByteArrayColumnChunkReader

	i64  [numColumns][]int64
	i32  []int32
	vals [numColumns][]parquet.ByteArray
	defs [numColumns][]int16
	evs  []change.Event

	rows    int64  // rows decoded so far
	prevSeq uint64 // seq of the last row decoded
	// binlog and gtid are the last strings made, reused while the rows of a
	// transaction repeat them.
	binlog, gtid string
}

func newDecoder(rg *file.RowGroupReader, g *rowGroupEntry, t *TableCount, hour time.Time) (*decoder, error) {
	d := &decoder{g: g, t: t, lo: hour.UnixMicro(), hi: hour.Add(time.Hour).UnixMicro(), prevSeq: g.FirstSeq - 1}
	n := int(min(batchRows, g.Rows))
	defs := columnDefs()
	for c := 0; c < numColumns; c++ {
		cr, err := rg.Column(c)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", defs[c].name, err)
		}
		ok := false
		switch c {
		case colSeq, colCommitTime, colEndPos:
			d.ints[c], ok = cr.(*file.Int64ColumnChunkReader)
			d.i64[c] = make([]int64, n)
		case colSchemaVersion:
			d.ver, ok = cr.(*file.Int32ColumnChunkReader)
			d.i32 = make([]int32, n)
		default:
			d.bytes[c], ok = cr.(*file.ByteArrayColumnChunkReader)
			d.vals[c] = make([]parquet.ByteArray, n)
			if defs[c].optional {
				d.defs[c] = make([]int16, n)
			}
		}
		if !ok {
			return nil, fmt.Errorf("column %s has reader %T", defs[c].name, cr)
		}
	}
	d.evs = make([]change.Event, n)
	return d, nil
}

// next decodes the next n rows (at most batchRows, and the rows left). The returned slice is
// reused by the next call; the byte slices and strings of its events are
// not.
func (d *decoder) next(n int) (evs []change.Event, err error) {
	defer func() {
		if p := recover(); p != nil {
			evs, err = nil, fmt.Errorf("decode: %v", p)
		}
	}()
	if err := d.read(n); err != nil {
		return nil, err
	}
	var cur [numColumns]int // next value of each optional column
	for k := 0; k < n; k++ {
		if err := d.row(k, &cur, &d.evs[k]); err != nil {
			return nil, fmt.Errorf("row %d: %w", d.rows+int64(k), err)
		}
	}
	d.rows += int64(n)
	return d.evs[:n], nil
}

// read reads n values (or levels) of every column.
func (d *decoder) read(n int) error {
	defs := columnDefs()
	for c := 0; c < numColumns; c++ {
		var err error
		switch {
		case d.ints[c] != nil:
			err = readValues(d.ints[c], d.i64[c][:n])
		case c == colSchemaVersion:
			err = readValues(d.ver, d.i32[:n])
		default:
			err = readBytes(d.bytes[c], d.vals[c][:n], d.defs[c])
		}
		if err != nil {
			return fmt.Errorf("column %s: %w", defs[c].name, err)
		}
	}
	return nil
}

// row fills e from row k of the batch; cur holds the next value of each
// optional column.
func (d *decoder) row(k int, cur *[numColumns]int, e *change.Event) error {
	seq := uint64(d.i64[colSeq][k])
	switch {
	case seq <= d.prevSeq || seq > d.g.LastSeq || (d.rows == 0 && k == 0 && seq != d.g.FirstSeq):
		return fmt.Errorf("seq %d after %d, outside the row group's %d..%d", seq, d.prevSeq, d.g.FirstSeq, d.g.LastSeq)
	case string(d.vals[colSchema][k]) != d.t.Schema || string(d.vals[colTable][k]) != d.t.Table:
		return fmt.Errorf("seq %d is of table %q.%q", seq, d.vals[colSchema][k], d.vals[colTable][k])
	case len(d.vals[colOp][k]) != 1 || !change.Op(d.vals[colOp][k][0]).Valid():
		return fmt.Errorf("seq %d has op %q", seq, d.vals[colOp][k])
	}
	ct := d.i64[colCommitTime][k]
	if ct < d.lo || ct >= d.hi {
		return fmt.Errorf("seq %d commit time %s is outside the hour", seq, time.UnixMicro(ct).UTC().Format(time.RFC3339Nano))
	}
	d.prevSeq = seq
	if b := d.vals[colBinlogFile][k]; string(b) != d.binlog {
		d.binlog = string(b)
	}
	*e = change.Event{
		Seq: seq, CommitTime: time.UnixMicro(ct).UTC(), BinlogFile: d.binlog, EndPos: uint64(d.i64[colEndPos][k]),
		Schema: d.t.Schema, Table: d.t.Table, Op: change.Op(d.vals[colOp][k][0]),
		PK: bstr(d.vals[colPK][k]), SchemaVersion: uint32(d.i32[k]),
	}
	for _, c := range [...]int{colGTID, colPKBefore, colBefore, colAfter} {
		switch def := d.defs[c][k]; def {
		case 0:
			continue
		case 1:
		default:
			return fmt.Errorf("seq %d: %s definition level %d", seq, columnDefs()[c].name, def)
		}
		v := d.vals[c][cur[c]]
		cur[c]++
		switch c {
		case colGTID:
			if string(v) != d.gtid {
				d.gtid = string(v)
			}
			e.GTID = d.gtid
		case colPKBefore:
			e.PKBefore = bstr(v)
		case colBefore:
			e.Before = image(v)
		case colAfter:
			e.After = image(v)
		}
	}
	return nil
}

// finish checks that the row group ended where its footer entry says and
// that no column has values left.
func (d *decoder) finish() error {
	if d.prevSeq != d.g.LastSeq {
		return fmt.Errorf("last seq %d, the footer says %d", d.prevSeq, d.g.LastSeq)
	}
	for c := 0; c < numColumns; c++ {
		var more bool
		switch {
		case d.ints[c] != nil:
			more = d.ints[c].HasNext()
		case c == colSchemaVersion:
			more = d.ver.HasNext()
		default:
			more = d.bytes[c].HasNext()
		}
		if more {
			return fmt.Errorf("column %s has more values than the row group's %d rows", columnDefs()[c].name, d.g.Rows)
		}
	}
	return nil
}

// image returns a present image value: never nil, and capped so that an
// append by the caller cannot run into the next value.
func image(v parquet.ByteArray) []byte {
	if v == nil {
		return []byte{}
	}
	return v[:len(v):len(v)]
}

// bstr returns b as a string without a copy. Only for values the Parquet
// reader cloned into a buffer of their own (ReadBatch does), which nothing
// writes to afterwards.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// errShort means a column chunk ended before the row group's rows.
var errShort = errors.New("column chunk ends before the row group's rows")

// batchReader is a Parquet column chunk reader of fixed-width values
// without definition levels (file.Int64ColumnChunkReader and the like).
type batchReader[T any] interface {
	ReadBatch(batchSize int64, values []T, defLvls, repLvls []int16) (total int64, valuesRead int, err error)
}

// readValues fills vals from cr, failing with errShort when the chunk ends
// first.
func readValues[T any](cr batchReader[T], vals []T) error {
	for got := 0; got < len(vals); {
		total, _, err := cr.ReadBatch(int64(len(vals)-got), vals[got:], nil, nil)
		if err != nil {
			return err
		}
		if total == 0 {
			return errShort
		}
		got += int(total)
	}
	return nil
}

func readBytes(cr *file.ByteArrayColumnChunkReader, vals []parquet.ByteArray, defs []int16) error {
	n := len(vals)
	for got, nv := 0, 0; got < n; {
		var lv []int16
		if defs != nil {
			lv = defs[got:n]
		}
		total, read, err := cr.ReadBatch(int64(n-got), vals[nv:], lv, nil)
		if err != nil {
			return err
		}
		if total == 0 {
			return errShort
		}
		got += int(total)
		nv += read
	}
	return nil
}
