package snapshot

import (
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// A TableWriter hands its rows to the Parquet writer in slices: a few
// thousand rows of every column, appended to the open (buffered) row group
// with pqarrow's WriteBuffered. A row group is therefore built from several
// slices, and the writer holds only a slice or two of Arrow values at a time
// (the row group itself is held by pqarrow, encoded and compressed). With
// WriterOptions.Overlap the slices are written by a goroutine of their own
// while the next slice is being built.

// Slice bounds: a slice is cut at whichever comes first, or at the end of a
// row group. Small enough that the writing goroutine starts early and the
// buffers stay small, large enough that pqarrow's per-call costs vanish.
const (
	sliceRows  = 16 << 10
	sliceBytes = 8 << 20
)

// overlapSlices is how many slices an overlapping writer holds: one being
// built, one being written, one waiting between them.
const overlapSlices = 3

// slice is the rows of one slice, column by column: the table's columns
// then the extra STRING columns.
type slice struct {
	cols       []column
	n          int  // rows
	bytes      int  // bounds every column's share, as groupB
	startGroup bool // the first slice of a row group
}

func newSlice(t *TableWriter, nExtra int) *slice {
	cols := newColumns(t.t, t.sc)
	return &slice{cols: append(cols, newStringColumns(nExtra)...)}
}

// record returns the slice as an Arrow record batch aliasing its buffers.
func (s *slice) record(sc *arrow.Schema) arrow.RecordBatch {
	arrs := make([]arrow.Array, len(s.cols))
	for i := range s.cols {
		arrs[i] = s.cols[i].newArray()
	}
	rec := array.NewRecordBatch(sc, arrs, int64(s.n))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

// reset empties the slice, keeping its buffers.
func (s *slice) reset() {
	for i := range s.cols {
		s.cols[i].reset()
	}
	s.n, s.bytes, s.startGroup = 0, 0, false
}

// writeSlice appends s to fw (starting a row group first when s starts
// one) and empties s. pqarrow copies whatever it keeps (dictionaries,
// statistics, encoded pages) before WriteBuffered returns, so s can be
// reused at once.
func writeSlice(fw *pqarrow.FileWriter, sc *arrow.Schema, s *slice) error {
	defer s.reset()
	if s.startGroup {
		if err := fw.NewBufferedRowGroupChecked(); err != nil {
			return err
		}
	}
	rec := s.record(sc)
	defer rec.Release()
	return fw.WriteBuffered(rec)
}

// overlapper writes slices in a goroutine of its own, in the order given.
// Built slices go to jobs; written (emptied) ones come back on free, so at
// most overlapSlices are alive. After a write error the goroutine keeps
// emptying the slices it is given, without writing, so the builder never
// blocks; failed reports the error.
type overlapper struct {
	jobs chan *slice
	free chan *slice
	done chan struct{}
	mu   sync.Mutex
	err  error
}

func startOverlapper(fw *pqarrow.FileWriter, sc *arrow.Schema, slices []*slice) *overlapper {
	o := &overlapper{jobs: make(chan *slice, len(slices)), free: make(chan *slice, len(slices)), done: make(chan struct{})}
	for _, s := range slices {
		o.free <- s
	}
	go func() {
		defer close(o.done)
		for s := range o.jobs {
			if o.failed() != nil {
				s.reset()
			} else if err := writeSlice(fw, sc, s); err != nil {
				o.mu.Lock()
				o.err = err
				o.mu.Unlock()
			}
			o.free <- s
		}
	}()
	return o
}

// failed returns the first write error, or nil.
func (o *overlapper) failed() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// swap queues the built slice s and returns an empty one, waiting for one
// to be written when all are in use.
func (o *overlapper) swap(s *slice) *slice {
	o.jobs <- s
	return <-o.free
}

// stop waits until every queued slice is written and the goroutine has
// ended; it returns the first write error. It must be called exactly once.
func (o *overlapper) stop() error {
	close(o.jobs)
	<-o.done
	return o.failed()
}

// sliceWriteErr wraps a failed slice write with the table.
func sliceWriteErr(table string, err error) error {
	return fmt.Errorf("table %s: write row group: %w", table, err)
}
