package index

import (
	"fmt"
	"sync"

	"github.com/dbtrail/dbtrail/internal/change"
)

// Packed is a run of events packed for storage by PackEvents: checked and
// encoded, not yet stored. Capture packs a batch as it cuts it, so the
// decoded events and their images are freed before the batch waits for the
// index.
type Packed struct {
	buf              []byte // the payloads' storage, for Release
	chunks           []chunk
	events           int
	firstSeq         uint64
	lastSeq          uint64
	minHour, maxHour uint32
}

// Events is how many events p holds.
func (p *Packed) Events() int { return p.events }

// PackEvents checks evs (one source's, seq order) and packs them into
// event_chunks rows (see chunk.go). An event with an invalid op, a missing
// or extra image, a key that is not a JSON array or an image that is not a
// JSON object, or text that is not valid UTF-8 is an error, as are seqs that
// do not grow strictly. The packed form aliases nothing of evs: evs may be
// reused at once.
func PackEvents(evs []change.Event) (*Packed, error) {
	p := &Packed{events: len(evs)}
	if len(evs) == 0 {
		return p, nil
	}
	fail := func(err error) (*Packed, error) {
		return nil, fmt.Errorf("pack events %d..%d: %w", evs[0].Seq, evs[len(evs)-1].Seq, err)
	}
	for i := range evs {
		if err := checkEvent(&evs[i]); err != nil {
			return fail(err)
		}
		if i > 0 && evs[i].Seq <= evs[i-1].Seq {
			return fail(fmt.Errorf("%w: seq %d follows seq %d", ErrDuplicateSeq, evs[i].Seq, evs[i-1].Seq))
		}
		h := change.HourID(evs[i].CommitTime)
		if i == 0 {
			p.minHour, p.maxHour = h, h
		}
		p.minHour, p.maxHour = min(p.minHour, h), max(p.maxHour, h)
	}
	p.firstSeq, p.lastSeq = evs[0].Seq, evs[len(evs)-1].Seq
	var buf []byte
	if b, ok := payloadPool.Get().(*[]byte); ok {
		buf = *b
	}
	var err error
	if p.chunks, p.buf, err = packChunks(buf, evs); err != nil {
		return fail(err)
	}
	for i := range p.chunks {
		p.chunks[i].head = detachHead(p.chunks[i].head)
	}
	return p, nil
}

// payloadPool recycles the payload buffers of released Packed values: a
// fresh multi-megabyte buffer per batch costs its zeroing and GC work.
var payloadPool sync.Pool

// maxPooled is the largest buffer kept for reuse.
const maxPooled = 32 << 20

// Release hands p's storage back for reuse by PackEvents. p must not be used
// after. Calling it is optional (the garbage collector frees what is not
// released).
func (p *Packed) Release() {
	if p == nil || p.buf == nil {
		return
	}
	if cap(p.buf) <= maxPooled {
		b := p.buf[:0]
		payloadPool.Put(&b)
	}
	p.buf, p.chunks = nil, nil
}

// detachHead copies the header fields of e that a chunk row needs, without
// the images, so the packed form does not keep evs alive.
func detachHead(e *change.Event) *change.Event {
	return &change.Event{Seq: e.Seq, CommitTime: e.CommitTime, BinlogFile: e.BinlogFile, EndPos: e.EndPos, GTID: e.GTID,
		Schema: e.Schema, Table: e.Table, SchemaVersion: e.SchemaVersion}
}
