package moment

import (
	"container/heap"
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/dbtrail/dbtrail/internal/change"
)

// Events is where captured row changes are read from: the index
// (IndexEvents) and, for hours dropped from it, the hourly archives
// (ArchiveEvents); Merge reads several as one. Every method passes events
// of one table in seq order, each once, and stops at fn's first error,
// which it returns as is.
type Events interface {
	// TableEvents passes every event of schema.table of source with
	// after < seq <= upto.
	TableEvents(ctx context.Context, source, schemaName, table string, after, upto uint64, fn func(change.Event) error) error
	// KeyEvents passes every event of schema.table of source whose key
	// (Event.PK) or key before (Event.PKBefore) is key.
	KeyEvents(ctx context.Context, source, schemaName, table, key string, fn func(change.Event) error) error
}

// IndexEvents reads the index.
type IndexEvents struct{ Store Store }

// TableEvents streams the table's chunks (index.Store.WindowEvents).
func (ix IndexEvents) TableEvents(ctx context.Context, source, schemaName, table string, after, upto uint64, fn func(change.Event) error) error {
	return ix.Store.WindowEvents(ctx, source, schemaName, table, after, upto, fn)
}

// KeyEvents reads index.Store.KeyChanges and adds the events that moved
// another key to key (their PKBefore is another key, their PK key), which
// KeyChanges already holds as PK matches.
func (ix IndexEvents) KeyEvents(ctx context.Context, source, schemaName, table, key string, fn func(change.Event) error) error {
	evs, err := ix.Store.KeyChanges(ctx, source, schemaName, table, key)
	if err != nil {
		return err
	}
	for _, e := range evs {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// Merge returns the events of every source as one: each method merges its
// sources' events by seq, and passes an event that several sources hold
// (the same seq: an hour both archived and still in the index) once, from
// the first source listing it. With one source it is that source.
func Merge(sources ...Events) Events {
	if len(sources) == 1 {
		return sources[0]
	}
	return merged(sources)
}

type merged []Events

func (m merged) TableEvents(ctx context.Context, source, schemaName, table string, after, upto uint64, fn func(change.Event) error) error {
	streams := make([]stream, len(m))
	for i, s := range m {
		streams[i] = stream{from: after + 1, each: func(yield func(change.Event) error) error {
			return s.TableEvents(ctx, source, schemaName, table, after, upto, yield)
		}}
	}
	return mergeStreams(streams, fn)
}

func (m merged) KeyEvents(ctx context.Context, source, schemaName, table, key string, fn func(change.Event) error) error {
	streams := make([]stream, len(m))
	for i, s := range m {
		streams[i] = stream{each: func(yield func(change.Event) error) error {
			return s.KeyEvents(ctx, source, schemaName, table, key, yield)
		}}
	}
	return mergeStreams(streams, fn)
}

// stream is a sequence of events in seq order, none before seq from (a
// lower bound: a stream is not started before the merge reaches it).
type stream struct {
	from uint64
	each func(yield func(change.Event) error) error
}

// cursor is a started stream and its next event.
type cursor struct {
	order int // the stream's index: the earlier wins a tie
	next  func() (change.Event, error, bool)
	stop  func()
	head  change.Event
}

type cursors []*cursor

func (h cursors) Len() int { return len(h) }
func (h cursors) Less(i, j int) bool {
	if h[i].head.Seq != h[j].head.Seq {
		return h[i].head.Seq < h[j].head.Seq
	}
	return h[i].order < h[j].order
}
func (h cursors) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursors) Push(x any)   { *h = append(*h, x.(*cursor)) }
func (h *cursors) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// mergeStreams passes the events of streams to fn in seq order, each seq
// once. A stream is started only when the merge reaches its lower bound,
// so streams of later seqs (archive hours) are not all open at once. A
// stream that goes backwards in seq is an error.
func mergeStreams(streams []stream, fn func(change.Event) error) error {
	pending := make([]int, len(streams))
	for i := range pending {
		pending[i] = i
	}
	slices.SortStableFunc(pending, func(a, b int) int {
		switch {
		case streams[a].from < streams[b].from:
			return -1
		case streams[a].from > streams[b].from:
			return 1
		}
		return 0
	})
	var h cursors
	defer func() {
		for _, c := range h {
			c.stop()
		}
	}()
	// advance reads c's next event; false when c is done (then stopped).
	advance := func(c *cursor) (bool, error) {
		ev, err, ok := c.next()
		if !ok {
			c.stop()
			return false, nil
		}
		if err != nil {
			c.stop()
			return false, err
		}
		if ev.Seq < c.head.Seq {
			c.stop()
			return false, fmt.Errorf("merge events: a source passed seq %d after seq %d", ev.Seq, c.head.Seq)
		}
		c.head = ev
		return true, nil
	}
	start := func(i int) error {
		next, stop := iter.Pull2(func(yield func(change.Event, error) bool) {
			errStop := fmt.Errorf("stopped")
			err := streams[i].each(func(e change.Event) error {
				if !yield(e, nil) {
					return errStop
				}
				return nil
			})
			if err != nil && err != errStop {
				yield(change.Event{}, err)
			}
		})
		c := &cursor{order: i, next: next, stop: stop}
		ok, err := advance(c)
		if err != nil || !ok {
			return err
		}
		heap.Push(&h, c)
		return nil
	}
	var last uint64
	emitted := false
	for {
		for len(pending) > 0 && (len(h) == 0 || streams[pending[0]].from <= h[0].head.Seq) {
			if err := start(pending[0]); err != nil {
				return err
			}
			pending = pending[1:]
		}
		if len(h) == 0 {
			return nil
		}
		c := h[0]
		ev := c.head
		if !emitted || ev.Seq > last {
			if err := fn(ev); err != nil {
				return err
			}
			last, emitted = ev.Seq, true
		}
		ok, err := advance(c)
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
}
