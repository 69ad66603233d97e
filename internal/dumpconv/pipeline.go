package dumpconv

import (
	"context"
	"io/fs"
	"sync"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// Convert is a pipeline of two goroutines (three with a TableWriter whose
// Overlap is set, which writes Parquet in one of its own):
//
//	reader:  data files → statement parser → SQL text form, in batches
//	caller:  batches → Sink.AppendSQL (canonical form, hash, Arrow columns)
//
// Batches go through a bounded channel and come back empty to be reused,
// so memory is bounded by batchCount batches (each batchRows rows or
// batchBytes bytes, or one row when a row is larger) whatever the size of
// the table. Rows reach the sink in the order of the files.

// Batch bounds: a batch is sent when either is reached.
const (
	batchRows  = 1024
	batchBytes = 1 << 20
	// batchCount batches are alive: one being filled, one being appended,
	// the others waiting between the two.
	batchCount = 4
	// maxKeptBatch: a batch whose buffer one large row grew past this is
	// given a new one, so that the row's memory is not kept.
	maxKeptBatch = 16 << 20
)

// Progress is called every progressRows rows and after each data file, with
// the index of the data file and the rows appended so far.
type Progress func(file int, rows int64)

const progressRows = 1 << 17

// Convert appends every row of the table's data files, in order, to tw. A
// row that cannot be read or converted fails the table naming file, line,
// table and column (*InputError, *dumpfile.SyntaxError, or the sink's
// error, e.g. *snapshot.RowError, prefixed with file and line); rows before
// it may have been appended. Convert returns only after its reading
// goroutine has ended and closed its file.
func Convert(ctx context.Context, fsys fs.FS, dataFiles []string, def *schema.Table, tw Sink, progress Progress) error {
	if progress == nil {
		progress = func(int, int64) {}
	}
	p := newBatchPipe(len(def.Columns))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(p.full)
		c := newConverter(def)
		for i, name := range dataFiles {
			if !c.file(fsys, i, name, p) {
				return
			}
		}
	}()
	defer wg.Wait()
	defer close(p.stop)
	row := make([]rowimage.Cell, len(def.Columns))
	var rows int64
	for bt := range p.full {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := appendRows(ctx, bt, tw, row, &rows, progress); err != nil {
			return err
		}
		if bt.err != nil {
			return bt.err
		}
		if bt.last {
			progress(bt.file, rows)
		}
		p.recycle(bt)
	}
	return ctx.Err()
}

// batch is rows of one data file in the SQL text form: cells holds
// len(lines) rows of one cellRef per column, whose bytes are in data.
type batch struct {
	file  int    // index of the data file
	name  string // its name
	data  []byte
	cells []cellRef
	lines []int // 1-based line of each row
	last  bool  // the file's last batch
	err   error // what ended the file early, after the rows
}

// cellRef is one value: data[start:end], or NULL. It holds no pointer, so
// a batch's cells cost the garbage collector nothing.
type cellRef struct {
	start, end int
	null       bool
}

func (b *batch) full() bool { return len(b.lines) >= batchRows || len(b.data) >= batchBytes }

// batchPipe carries batches from the reader to the caller (full) and back
// (free); stop tells the reader that the caller has returned.
type batchPipe struct {
	full chan *batch
	free chan *batch
	stop chan struct{}
}

func newBatchPipe(cols int) *batchPipe {
	p := &batchPipe{full: make(chan *batch, batchCount), free: make(chan *batch, batchCount), stop: make(chan struct{})}
	for range batchCount {
		p.free <- &batch{data: make([]byte, 0, batchBytes+batchBytes/4), cells: make([]cellRef, 0, batchRows*cols)}
	}
	return p
}

// get returns an empty batch, or false once the caller has returned.
func (p *batchPipe) get() (*batch, bool) {
	select {
	case bt := <-p.free:
		return bt, true
	case <-p.stop:
		return nil, false
	}
}

// put sends a filled batch (last: the file's last one), or reports false
// once the caller has returned.
func (p *batchPipe) put(bt *batch, last bool) bool {
	bt.last = last
	select {
	case p.full <- bt:
		return true
	case <-p.stop:
		return false
	}
}

// recycle empties bt and gives it back to the reader.
func (p *batchPipe) recycle(bt *batch) {
	if cap(bt.data) > maxKeptBatch {
		bt.data = make([]byte, 0, batchBytes+batchBytes/4)
	}
	*bt = batch{data: bt.data[:0], cells: bt.cells[:0], lines: bt.lines[:0]}
	p.free <- bt
}
