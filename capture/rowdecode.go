package capture

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"
)

// rowDecoder moves go-mysql's decoding of row images off the goroutine that
// reads the binlog: the parser decodes only a rows event's header (which
// resolves its table map, in stream order), and the pump goroutine decodes
// the rows before handing events on, in order. Reading, decoding rows and
// encoding images then run on different cores; decoded in the reader, they
// made it the pipeline's bottleneck on interleaved OLTP traffic.
type rowDecoder struct {
	mu     sync.Mutex
	bodies map[*replication.RowsEvent]rowsBody
	out    chan streamed
	// next's side: the rest of the batch received last.
	pending []*replication.BinlogEvent
	err     error
	// unsigned is the pump's copy of the table map of the rows event it
	// decodes, without signedness (see decodeBody).
	unsigned replication.TableMapEvent
	// waitingSince is when the pump began waiting for the source's next
	// event, in Unix nanoseconds, 0 while it is not waiting (it decodes or
	// waits for capture to take what it decoded): watch reads it.
	waitingSince atomic.Int64
}

// streamerBuffer is how many events go-mysql's streamer holds ahead of
// the pump (BinlogSyncerConfig.EventCacheCount); handOver is the most
// events the pump hands on at once.
const (
	streamerBuffer = 256
	handOver       = 64
)

// rowsBody is what DecodeData needs of a rows event after its header.
type rowsBody struct {
	pos  int
	data []byte
}

// streamed is a batch of events in stream order, then the error that
// ended the stream, if any.
type streamed struct {
	evs []*replication.BinlogEvent
	err error
}

func newRowDecoder() *rowDecoder {
	return &rowDecoder{bodies: map[*replication.RowsEvent]rowsBody{}, out: make(chan streamed, 4)}
}

// decodeHeader is the syncer's RowsEventDecodeFunc. data is the event's own
// buffer (go-mysql reads every packet into a new one), so it may be kept.
func (d *rowDecoder) decodeHeader(re *replication.RowsEvent, data []byte) error {
	pos, err := re.DecodeHeader(data)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.bodies[re] = rowsBody{pos: pos, data: data}
	d.mu.Unlock()
	return nil
}

// pump reads events from streamer, decodes the rows of rows events and
// sends them, in order, to d.out in batches of at most handOver events:
// the events that wait in the streamer's buffer go on together (a channel
// operation per batch, not per event: OLTP transactions are dozens of small
// events), each batch decoded just before it is sent, so that at most
// cap(d.out)+2 batches of decoded rows are held. A read or decode error is
// sent after the events before it, as the last item. It returns when ctx
// ends.
func (d *rowDecoder) pump(ctx context.Context, streamer *replication.BinlogStreamer) error {
	for {
		d.waitingSince.Store(time.Now().UnixNano())
		ev, err := streamer.GetEvent(ctx)
		d.waitingSince.Store(0)
		var waiting []*replication.BinlogEvent
		if err == nil {
			waiting = append(append(make([]*replication.BinlogEvent, 0, 1+streamerBuffer), ev), streamer.DumpEvents()...)
		}
		for len(waiting) > 0 || err != nil {
			n := min(len(waiting), handOver)
			evs := waiting[:n:n]
			waiting = waiting[n:]
			for i, ev := range evs {
				if err = d.decodeRows(ev); err != nil {
					evs, waiting = evs[:i], nil
					break
				}
			}
			if !d.send(ctx, streamed{evs: evs, err: err}) || err != nil {
				return nil
			}
		}
	}
}

// send hands s to next; false when ctx ended first.
func (d *rowDecoder) send(ctx context.Context, s streamed) bool {
	if ctx.Err() != nil {
		return false
	}
	select {
	case d.out <- s:
		return true
	case <-ctx.Done():
		return false
	}
}

// decodeRows decodes the rows of ev, a rows event, or of the rows events
// a transaction payload event (MySQL binlog compression) holds. A rows
// event that decodes directly (directEvent) is left to the decoder, which
// takes its body.
func (d *rowDecoder) decodeRows(ev *replication.BinlogEvent) error {
	switch e := ev.Event.(type) {
	case *replication.RowsEvent:
		if directEvent(ev.Header, e) {
			return nil
		}
		return d.decodeBody(e)
	case *replication.TransactionPayloadEvent:
		for _, inner := range e.Events {
			if err := d.decodeRows(inner); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeBody decodes re's rows with its table map's signedness left out:
// go-mysql rebuilds a map of the signedness of every column for each row
// image it decodes (TableMapEvent.UnsignedMap), which cost capture more than
// a tenth of its CPU on wide rows. Integers of UNSIGNED columns then come
// as signed values of their width, which types reinterprets from the
// column definition (appendIntValue), as it does for a source that writes
// no signedness metadata. re keeps its own table map.
func (d *rowDecoder) decodeBody(re *replication.RowsEvent) error {
	b, ok := d.take(re)
	if !ok {
		return nil // decoded by the parser already
	}
	return decodeUnsigned(re, b, &d.unsigned)
}

// take returns re's body and forgets it; false when re has none (its rows
// are decoded, or it was taken).
func (d *rowDecoder) take(re *replication.RowsEvent) (rowsBody, bool) {
	d.mu.Lock()
	b, ok := d.bodies[re]
	delete(d.bodies, re)
	d.mu.Unlock()
	return b, ok
}

// decodeUnsigned decodes re's rows from b with go-mysql, its table map's
// signedness left out (see decodeBody); scratch holds the copy of the
// table map.
func decodeUnsigned(re *replication.RowsEvent, b rowsBody, scratch *replication.TableMapEvent) error {
	tm := re.Table
	if tm != nil && len(tm.SignednessBitmap) > 0 {
		*scratch = *tm
		scratch.SignednessBitmap = nil
		re.Table = scratch
		defer func() { re.Table = tm }()
	}
	return re.DecodeData(b.pos, b.data)
}

// next returns the next event, or the stream's error, or ctx's error when
// it ends first.
func (d *rowDecoder) next(ctx context.Context) (*replication.BinlogEvent, error) {
	for len(d.pending) == 0 {
		if d.err != nil {
			return nil, d.err
		}
		select {
		case s := <-d.out:
			d.pending, d.err = s.evs, s.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	ev := d.pending[0]
	d.pending[0] = nil
	d.pending = d.pending[1:]
	return ev, nil
}

// watch fails when the pump has waited for silence for the source's next
// event while the source sends a heartbeat every second: the connection is
// dead or stuck. A pump held up by capture (the index is slow) is not
// waiting for the source. It replaces go-mysql's ReadTimeout, which set a
// read deadline on the socket for every packet (a twentieth of capture's
// CPU on OLTP binlogs). It returns nil when ctx ends.
func (d *rowDecoder) watch(ctx context.Context, silence time.Duration) error {
	t := time.NewTicker(silence / 10)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			since := d.waitingSince.Load()
			if quiet := now.Sub(time.Unix(0, since)); since != 0 && quiet >= silence {
				return &transientError{fmt.Errorf("no binlog event or heartbeat from the source for %s", quiet.Round(time.Second))}
			}
		}
	}
}
