package snapshot

import (
	"fmt"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// A TableWriter hands its rows to the Parquet writer one row group at a
// time: a slice holds every column of one row group as Arrow buffers, and
// is written column after column, as pqarrow.WriteTable writes a table.
// Writing a whole column chunk at once keeps that column's dictionary hash
// table in the CPU caches while its values are hashed (handing pqarrow a
// few thousand rows of every column in turn cost a sixth more CPU per row,
// the tables evicting each other). A row group's values are therefore held
// as Arrow columns until written: with WriterOptions.Overlap two slices are
// alive, one being built while the other is written by a goroutine of its
// own; without, one. (RowGroupRows and RowGroupBytes bound a slice.)

// overlapSlices is how many slices an overlapping writer holds: one being
// built, one being written.
const overlapSlices = 2

// slice is the rows of one row group, column by column: the table's
// columns then the extra STRING columns.
type slice struct {
	cols  []column
	n     int // rows
	bytes int // bounds every column's share, as groupB
}

func newSlice(t *TableWriter, nExtra int) *slice {
	cols := newColumns(t.t, t.sc)
	return &slice{cols: append(cols, newStringColumns(nExtra)...)}
}

// reset empties the slice, keeping its buffers.
func (s *slice) reset() {
	for i := range s.cols {
		s.cols[i].reset()
	}
	s.n, s.bytes = 0, 0
}

// sizes appends the lengths of the slice's buffers to dst.
func (s *slice) sizes(dst []int) []int {
	for i := range s.cols {
		c := &s.cols[i]
		dst = append(dst, len(c.valid), len(c.fixed), len(c.offs), len(c.data))
	}
	return dst
}

// reserve grows the slice's buffers to the lengths sizes gives (those of a
// slice of the same writer), so that a new slice does not grow its buffers
// value by value through its first row group as the previous slice did.
func (s *slice) reserve(sizes []int) {
	if len(sizes) != 4*len(s.cols) {
		return
	}
	for i := range s.cols {
		c, n := &s.cols[i], sizes[4*i:4*i+4]
		c.valid = slices.Grow(c.valid, max(n[0]-len(c.valid), 0))
		c.fixed = slices.Grow(c.fixed, max(n[1]-len(c.fixed), 0))
		c.offs = slices.Grow(c.offs, max(n[2]-len(c.offs), 0))
		c.data = slices.Grow(c.data, max(n[3]-len(c.data), 0))
	}
}

// writeSlice writes s to fw as one row group, column after column, and
// empties s. pqarrow writes a column chunk's pages before
// WriteColumnData returns and copies what it keeps (statistics), so s can
// be reused at once.
func writeSlice(fw *pqarrow.FileWriter, s *slice) error {
	defer s.reset()
	if err := fw.NewRowGroupChecked(); err != nil {
		return err
	}
	for i := range s.cols {
		arr := s.cols[i].newArray()
		err := fw.WriteColumnData(arr)
		arr.Release()
		if err != nil {
			return err
		}
	}
	return nil
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

func startOverlapper(fw *pqarrow.FileWriter, slices []*slice) *overlapper {
	o := &overlapper{jobs: make(chan *slice, len(slices)), free: make(chan *slice, len(slices)), done: make(chan struct{})}
	for _, s := range slices {
		o.free <- s
	}
	go func() {
		defer close(o.done)
		for s := range o.jobs {
			if o.failed() != nil {
				s.reset()
			} else if err := writeSlice(fw, s); err != nil {
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
