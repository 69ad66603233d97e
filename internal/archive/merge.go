package archive

import (
	"bytes"
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/dbtrail/dbtrail/internal/change"
)

// ConflictError reports two different events with the same seq: an
// archive file and the index disagree about one event.
type ConflictError struct {
	Seq           uint64
	Schema, Table string
	Field         string // the first field that differs
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("event seq %d of %s.%s: %s differs between the archive file and the index", e.Seq, e.Schema, e.Table, e.Field)
}

// Scan is a stream of events: it calls fn with each in turn and stops at
// fn's first error, which it returns as is (Reader.Events and
// index.Store.HourEvents are Scans).
type Scan func(fn func(change.Event) error) error

// errStopped ends a Scan whose consumer stopped pulling.
var errStopped = errors.New("archive: scan stopped")

// pull turns s into a pull iterator; stop must be called.
func pull(s Scan) (next func() (change.Event, error, bool), stop func()) {
	return iter.Pull2(func(yield func(change.Event, error) bool) {
		err := s(func(e change.Event) error {
			if !yield(e, nil) {
				return errStopped
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopped) {
			yield(change.Event{}, err)
		}
	})
}

// fileOrder compares events in archive file order: schema, table
// (byte-wise), then seq.
func fileOrder(a, b *change.Event) int {
	return cmp.Or(strings.Compare(a.Schema, b.Schema), strings.Compare(a.Table, b.Table), cmp.Compare(a.Seq, b.Seq))
}

// MergeFileOrder calls fn with the union of two streams, each in file order
// (schema, table, seq), in file order. An event in both (same schema, table
// and seq) comes once, and only if both are equal in every field; otherwise
// the merge stops with a *ConflictError. Archiving an hour again after
// events landed in it merges the stored file with the index's events so.
func MergeFileOrder(a, b Scan, fn func(change.Event) error) error {
	sa, sb := newStream(a), newStream(b)
	defer sa.stop()
	defer sb.stop()
	if err := errors.Join(sa.advance(), sb.advance()); err != nil {
		return err
	}
	for sa.ok || sb.ok {
		c := 1
		switch {
		case !sb.ok:
			c = -1
		case sa.ok:
			c = fileOrder(&sa.e, &sb.e)
		}
		if c == 0 {
			if f := differs(&sa.e, &sb.e); f != "" {
				return &ConflictError{Seq: sa.e.Seq, Schema: sa.e.Schema, Table: sa.e.Table, Field: f}
			}
			if err := sb.advance(); err != nil {
				return err
			}
		}
		from := sa
		if c > 0 {
			from = sb
		}
		if err := fn(from.e); err != nil {
			return err
		}
		if err := from.advance(); err != nil {
			return err
		}
	}
	return nil
}

// stream is a pulled Scan and its current event.
type stream struct {
	next func() (change.Event, error, bool)
	stop func()
	e    change.Event
	ok   bool
}

func newStream(s Scan) *stream {
	next, stop := pull(s)
	return &stream{next: next, stop: stop}
}

// advance moves to the next event; ok is false at the end.
func (s *stream) advance() error {
	e, err, ok := s.next()
	if err != nil {
		s.ok = false
		return err
	}
	s.e, s.ok = e, ok
	return nil
}

// differs names the first field in which a and b differ, "" for none.
func differs(a, b *change.Event) string {
	switch {
	case a.Seq != b.Seq:
		return "seq"
	case !a.CommitTime.Equal(b.CommitTime):
		return "commit time"
	case a.BinlogFile != b.BinlogFile || a.EndPos != b.EndPos:
		return "binlog position"
	case a.GTID != b.GTID:
		return "GTID"
	case a.Schema != b.Schema || a.Table != b.Table || a.SchemaVersion != b.SchemaVersion:
		return "table"
	case a.Op != b.Op:
		return "op"
	case a.PK != b.PK || a.PKBefore != b.PKBefore:
		return "key"
	case (a.Before == nil) != (b.Before == nil) || !bytes.Equal(a.Before, b.Before):
		return "before image"
	case (a.After == nil) != (b.After == nil) || !bytes.Equal(a.After, b.After):
		return "after image"
	}
	return ""
}

// SeqOrder calls fn with every event of an archive file in seq order, the
// order of the index, merging its tables: open must return a new Reader of
// the file on each call; SeqOrder opens one per table (each reads only its
// table's row groups), so it holds one row group per table at a time. A
// damaged row group stops it with a *CorruptError; an error from fn stops
// it and is returned as is.
func SeqOrder(open func() (*Reader, error), fn func(change.Event) error) error {
	first, err := open()
	if err != nil {
		return err
	}
	tables := first.Footer().Tables
	h := make(seqHeap, 0, len(tables))
	var stops []func()
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	for i, t := range tables {
		r := first
		if i > 0 {
			if r, err = open(); err != nil {
				return err
			}
		}
		next, stop := pull(func(fn func(change.Event) error) error { return r.TableEvents(t.Schema, t.Table, fn) })
		stops = append(stops, stop)
		e, err, ok := next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, seqHead{e: e, next: next})
		}
	}
	heap.Init(&h)
	for len(h) > 0 {
		if err := fn(h[0].e); err != nil {
			return err
		}
		e, err, ok := h[0].next()
		if err != nil {
			return err
		}
		if ok {
			h[0].e = e
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return nil
}

// seqHead is the next event of one table's stream.
type seqHead struct {
	e    change.Event
	next func() (change.Event, error, bool)
}

// seqHeap orders the tables' streams by their next event's seq.
type seqHeap []seqHead

func (h seqHeap) Len() int           { return len(h) }
func (h seqHeap) Less(i, j int) bool { return h[i].e.Seq < h[j].e.Seq }
func (h seqHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *seqHeap) Push(x any)        { *h = append(*h, x.(seqHead)) }
func (h *seqHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
