package capture

import (
	"context"
	"fmt"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
)

// packer packs batches for the index on its own goroutine, between the
// decoder and the writer: packing took a third of the decoder's time, and
// the decoder is the stage that keeps pace with the binlog. It hands each
// batch's event list back to the decoder once packed (free), so that the
// lists are reused rather than allocated per batch.
type packer struct {
	free chan []change.Event
}

// freeLists is how many packed event lists wait for reuse at most; more
// are left to the garbage collector.
const freeLists = 4

func newPacker() *packer { return &packer{free: make(chan []change.Event, freeLists)} }

// run packs the batches of in, in order, and sends them to out; it closes
// out when in is closed. A batch that cannot be packed is an error naming
// the binlog position it was cut at.
func (p *packer) run(ctx context.Context, in <-chan *batch, out chan<- *batch) error {
	defer close(out)
	for b := range in {
		if b.raw != nil {
			packed, err := index.PackEvents(b.raw)
			if err != nil {
				return fmt.Errorf("capture at %s: %w", b.cutAt, err)
			}
			b.events = packed
			p.recycle(b.raw)
			b.raw = nil
		}
		select {
		case out <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// recycle offers evs, packed, for reuse; its images are let go.
func (p *packer) recycle(evs []change.Event) {
	clear(evs)
	select {
	case p.free <- evs[:0]:
	default:
	}
}

// list returns an empty event list, a recycled one when there is one.
func (p *packer) list() []change.Event {
	if p == nil {
		return nil
	}
	select {
	case evs := <-p.free:
		return evs
	default:
		return nil
	}
}
