package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// ReadChanges reads a changes file back (no digest check): its table
// definition (the footer's) and every change in file order, its Before and
// After as canonical JSON images (rowimage.SQLImage of the typed values), nil
// where the op has none. It checks that the columns are ChangesSchema of
// the footer's table and that the rows number its row count.
func ReadChanges(path string, fn func(Change) error) (*schema.Table, error) {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("read changes %s: %w", path, err)
	}
	defer pf.Close()
	fail := func(err error) (*schema.Table, error) { return nil, fmt.Errorf("read changes %s: %w", path, err) }
	kv := pf.MetaData().KeyValueMetadata()
	get := func(k string) string {
		if v := kv.FindValue(k); v != nil {
			return *v
		}
		return ""
	}
	if v := get(KeyWriterVersion); v != ChangesWriterVersion {
		return fail(fmt.Errorf("writer version %q, want %s", v, ChangesWriterVersion))
	}
	t := new(schema.Table)
	if err := json.Unmarshal([]byte(get(KeyTable)), t); err != nil {
		return fail(fmt.Errorf("footer %s: %w", KeyTable, err))
	}
	want, err := ChangesSchema(t)
	if err != nil {
		return fail(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 * 1024}, memory.DefaultAllocator)
	if err != nil {
		return fail(err)
	}
	got, err := fr.Schema()
	if err != nil {
		return fail(err)
	}
	if got.NumFields() != want.NumFields() {
		return fail(fmt.Errorf("%d columns, want %d", got.NumFields(), want.NumFields()))
	}
	for i := range want.Fields() {
		if g, w := got.Field(i), want.Field(i); g.Name != w.Name || !arrow.TypeEqual(g.Type, w.Type) {
			return fail(fmt.Errorf("column %d is %s %s, want %s %s", i+1, g.Name, g.Type, w.Name, w.Type))
		}
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return fail(err)
	}
	defer rr.Release()
	n := len(t.Columns)
	var rows int64
	cells := make([]rowimage.Cell, n)
	var buf []byte
	image := func(rec arrow.RecordBatch, first, i int) ([]byte, error) {
		buf = buf[:0]
		ends := make([]int, n)
		for c := 0; c < n; c++ {
			var ok bool
			if buf, ok, err = appendSQLText(buf, rec.Column(first+c), i); err != nil {
				return nil, err
			}
			ends[c] = -1
			if ok {
				ends[c] = len(buf)
			}
		}
		start := 0
		for c, end := range ends {
			if end < 0 {
				cells[c] = rowimage.NullCell()
				continue
			}
			cells[c] = rowimage.TextCell(buf[start:end:end])
			start = end
		}
		return rowimage.SQLImage(t, cells)
	}
	ops := map[string]byte{"insert": 'i', "update": 'u', "delete": 'd'}
	for rr.Next() {
		rec := rr.RecordBatch()
		seq := rec.Column(0).(*array.Uint64)
		op := rec.Column(1).(*array.String)
		ct := rec.Column(2).(*array.Timestamp)
		gtid := rec.Column(3).(*array.String)
		fileCol := rec.Column(4).(*array.String)
		end := rec.Column(5).(*array.Uint64)
		pk := rec.Column(6).(*array.String)
		pkb := rec.Column(7).(*array.String)
		for i := 0; i < int(rec.NumRows()); i++ {
			ch := Change{Seq: seq.Value(i), Op: ops[op.Value(i)], CommitTime: time.UnixMicro(int64(ct.Value(i))).UTC(),
				BinlogFile: fileCol.Value(i), EndPos: end.Value(i), PK: pk.Value(i)}
			if ch.Op == 0 {
				return fail(fmt.Errorf("row %d: op %q", rows+1, op.Value(i)))
			}
			if gtid.IsValid(i) {
				ch.GTID = gtid.Value(i)
			}
			if pkb.IsValid(i) {
				ch.PKBefore = pkb.Value(i)
			}
			if ch.Op != 'i' {
				if ch.Before, err = image(rec, 8, i); err != nil {
					return fail(fmt.Errorf("row %d before: %w", rows+1, err))
				}
			}
			if ch.Op != 'd' {
				if ch.After, err = image(rec, 8+n, i); err != nil {
					return fail(fmt.Errorf("row %d after: %w", rows+1, err))
				}
			}
			rows++
			if err := fn(ch); err != nil {
				return nil, err
			}
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fail(err)
	}
	if get(KeyRowCount) != fmt.Sprint(rows) {
		return fail(fmt.Errorf("%d rows, footer says %s", rows, get(KeyRowCount)))
	}
	return t, nil
}
