package fold

import (
	"errors"
	"io"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/dbtrail/dbtrail/internal/rowimage"
)

// fakeRows is a rowSource of n rows of two cells (the row number, and NULL
// every third row), reusing one row as a table reader does, then err.
type fakeRows struct {
	n, at int
	err   error
	row   []rowimage.Cell
	buf   []byte
}

func (f *fakeRows) Next() ([]rowimage.Cell, error) {
	if f.at == f.n {
		return nil, f.err
	}
	f.at++
	f.buf = strconv.AppendInt(f.buf[:0], int64(f.at), 10)
	f.row = append(f.row[:0], rowimage.TextCell(f.buf))
	if f.at%3 == 0 {
		f.row = append(f.row, rowimage.NullCell())
	} else {
		f.row = append(f.row, rowimage.TextCell([]byte("v")))
	}
	return f.row, nil
}

// TestReadAheadKeepsRowsAndEnd: rows read ahead across several blocks are
// src's rows in its order, then src's error (io.EOF or another), however
// many rows the last block holds.
func TestReadAheadKeepsRowsAndEnd(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		n   int
		err error
	}{{0, io.EOF}, {1, io.EOF}, {aheadRows, io.EOF}, {3*aheadRows + 17, io.EOF}, {2*aheadRows + 5, boom}} {
		r := newReadAhead(&fakeRows{n: c.n, err: c.err}, 2)
		for i := 1; ; i++ {
			row, err := r.Next()
			if err != nil {
				if err != c.err || i != c.n+1 {
					t.Fatalf("%d rows then %v: row %d: %v", c.n, c.err, i, err)
				}
				break
			}
			if string(row[0].Text) != strconv.Itoa(i) || row[1].Null != (i%3 == 0) || (!row[1].Null && string(row[1].Text) != "v") {
				t.Fatalf("%d rows: row %d is %+v", c.n, i, row)
			}
		}
		if _, err := r.Next(); err != c.err {
			t.Fatalf("%d rows: after the end %v, want %v", c.n, err, c.err)
		}
		r.Close()
	}
}

// TestReadAheadCloseEarly: a reader closed before its end stops its
// goroutine (Close returns) without reading src to its end.
func TestReadAheadCloseEarly(t *testing.T) {
	src := &fakeRows{n: 100 * aheadRows, err: io.EOF}
	r := newReadAhead(src, 2)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if src.at > (aheadBlocks+1)*aheadRows {
		t.Fatalf("src read to row %d after Close, more than the blocks in flight", src.at)
	}
}

// TestReadAheadRowWidth: a row of another width than the table's is an
// error, not a misread.
func TestReadAheadRowWidth(t *testing.T) {
	r := newReadAhead(&fakeRows{n: 5, err: io.EOF}, 3)
	defer r.Close()
	if _, err := r.Next(); err == nil {
		t.Fatal("a row of 2 values read as 3")
	}
}

// TestReadAheadBlockBytes: rows of large values make blocks of fewer rows
// (their values about aheadBytes), still read whole and in order.
func TestReadAheadBlockBytes(t *testing.T) {
	big := make([]byte, aheadBytes/3+1)
	src := &wideRows{n: 10, v: big}
	r := newReadAhead(src, 1)
	defer r.Close()
	for i := 1; i <= 10; i++ {
		row, err := r.Next()
		if err != nil || len(row[0].Text) != len(big) || row[0].Text[0] != byte(i) {
			t.Fatalf("row %d: %d bytes, %v", i, len(row[0].Text), err)
		}
		if at := int(src.at.Load()); at > i+(aheadBlocks+1)*3 {
			t.Fatalf("at row %d the source was read to row %d: blocks are not bounded by bytes", i, at)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("after 10 rows: %v", err)
	}
}

// wideRows is a rowSource of n rows of one value, v with its first byte
// the row number.
type wideRows struct {
	n  int32
	at atomic.Int32 // rows read (the test reads it while they are)
	v  []byte
}

func (w *wideRows) Next() ([]rowimage.Cell, error) {
	if w.at.Load() == w.n {
		return nil, io.EOF
	}
	at := w.at.Add(1)
	w.v[0] = byte(at)
	return []rowimage.Cell{rowimage.TextCell(w.v)}, nil
}
