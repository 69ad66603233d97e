package fold

import (
	"fmt"
	"sync"

	"github.com/dbtrail/dbtrail/internal/rowimage"
)

// Bounds of a readAhead: a block holds aheadRows rows, or fewer whose
// values reach aheadBytes (at least one row); aheadBlocks are in flight
// (one being filled, one waiting, one being read).
const (
	aheadRows   = 4096
	aheadBytes  = 4 << 20
	aheadBlocks = 3
)

// rowSource is what liveRows reads a table file through.
type rowSource interface {
	Next() ([]rowimage.Cell, error)
}

// readAhead reads the rows of src on another goroutine into blocks of
// copied cells (aheadRows rows or aheadBytes of values each), so that decoding the next rows of a
// table file overlaps the caller's work on these. Rows come in src's order,
// then src's error (io.EOF at its end); a row is valid until the next call
// of Next, as src's. Close stops the goroutine; src is read by no one after
// it returns.
type readAhead struct {
	full  chan *rowBlock
	free  chan *rowBlock
	done  chan struct{}
	wg    sync.WaitGroup
	cur   *rowBlock
	at    int // rows of cur returned
	ncols int
}

// rowBlock is up to aheadRows rows: their cells (ncols each) point into buf.
type rowBlock struct {
	buf   []byte
	ends  []int // per cell, its end in buf; -1 for NULL
	cells []rowimage.Cell
	rows  int
	err   error // after the rows: src's error, nil while more may come
}

func newReadAhead(src rowSource, ncols int) *readAhead {
	r := &readAhead{full: make(chan *rowBlock, aheadBlocks), free: make(chan *rowBlock, aheadBlocks), done: make(chan struct{}), ncols: ncols}
	for range aheadBlocks {
		r.free <- &rowBlock{}
	}
	r.wg.Add(1)
	go r.fill(src)
	return r
}

// fill reads src into free blocks until src's error or Close.
func (r *readAhead) fill(src rowSource) {
	defer r.wg.Done()
	for {
		var b *rowBlock
		select {
		case b = <-r.free:
		case <-r.done:
			return
		}
		b.read(src, r.ncols)
		select {
		case r.full <- b:
		case <-r.done:
			return
		}
		if b.err != nil {
			return
		}
	}
}

// read fills b with the next rows of src.
func (b *rowBlock) read(src rowSource, ncols int) {
	b.buf, b.ends, b.rows, b.err = b.buf[:0], b.ends[:0], 0, nil
	for b.rows < aheadRows && len(b.buf) < aheadBytes {
		row, err := src.Next()
		if err == nil && len(row) != ncols {
			err = fmt.Errorf("read ahead: a row of %d values, want %d", len(row), ncols)
		}
		if err != nil {
			b.err = err
			break
		}
		for _, c := range row {
			if c.Null {
				b.ends = append(b.ends, -1)
				continue
			}
			b.buf = append(b.buf, c.Text...)
			b.ends = append(b.ends, len(b.buf))
		}
		b.rows++
	}
	b.cells = b.cells[:0]
	start := 0
	for _, end := range b.ends[:b.rows*ncols] {
		if end < 0 {
			b.cells = append(b.cells, rowimage.NullCell())
			continue
		}
		b.cells = append(b.cells, rowimage.TextCell(b.buf[start:end:end]))
		start = end
	}
}

// Next returns the next row, or src's error after the last.
func (r *readAhead) Next() ([]rowimage.Cell, error) {
	for r.cur == nil || r.at == r.cur.rows {
		if r.cur != nil {
			if r.cur.err != nil {
				return nil, r.cur.err
			}
			r.free <- r.cur
		}
		r.cur, r.at = <-r.full, 0
	}
	row := r.cur.cells[r.at*r.ncols : (r.at+1)*r.ncols]
	r.at++
	return row, nil
}

// Close stops the reading goroutine and waits for it.
func (r *readAhead) Close() {
	close(r.done)
	r.wg.Wait()
}
