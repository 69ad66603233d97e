package capture

import (
	"context"
	"sync"

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
}

// rowsBody is what DecodeData needs of a rows event after its header.
type rowsBody struct {
	pos  int
	data []byte
}

// streamed is an event or the error that ended the stream.
type streamed struct {
	ev  *replication.BinlogEvent
	err error
}

func newRowDecoder() *rowDecoder {
	return &rowDecoder{bodies: map[*replication.RowsEvent]rowsBody{}, out: make(chan streamed, 256)}
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
// sends them, in order, to d.out; a read or decode error is sent as the
// last item. It returns when ctx ends.
func (d *rowDecoder) pump(ctx context.Context, streamer *replication.BinlogStreamer) error {
	for {
		ev, err := streamer.GetEvent(ctx)
		if err == nil {
			err = d.decodeRows(ev)
		}
		if ctx.Err() != nil {
			return nil
		}
		select {
		case d.out <- streamed{ev: ev, err: err}:
		case <-ctx.Done():
			return nil
		}
		if err != nil {
			return nil
		}
	}
}

// decodeRows decodes the rows of ev, a rows event, or of the rows events
// a transaction payload event (MySQL binlog compression) holds.
func (d *rowDecoder) decodeRows(ev *replication.BinlogEvent) error {
	switch e := ev.Event.(type) {
	case *replication.RowsEvent:
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

func (d *rowDecoder) decodeBody(re *replication.RowsEvent) error {
	d.mu.Lock()
	b, ok := d.bodies[re]
	delete(d.bodies, re)
	d.mu.Unlock()
	if !ok {
		return nil // decoded by the parser already
	}
	return re.DecodeData(b.pos, b.data)
}

// next returns the next event, or ctx's error when it ends first.
func (d *rowDecoder) next(ctx context.Context) (*replication.BinlogEvent, error) {
	select {
	case s := <-d.out:
		return s.ev, s.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
