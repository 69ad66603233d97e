package moment

import (
	"context"
	"fmt"
)

// DroppedHours lists the confirmed archived hours holding events with seq
// in (after, upto] that the index no longer holds whole: the events a
// reader of that range can only read from the archive location. A reader
// without one (Archive nil) refuses such a range, naming them, rather than
// answer without their events. Only the hours in the range are counted in
// the index.
func (p Past) DroppedHours(ctx context.Context, after, upto uint64) ([]ArchiveHour, error) {
	recs, err := p.Index.Archives(ctx, p.Source)
	if err != nil {
		return nil, fmt.Errorf("archived hours of %s: %w", p.Source, err)
	}
	var out []ArchiveHour
	for _, r := range recs {
		if !r.Confirmed() || r.LastSeq <= after || r.FirstSeq > upto {
			continue
		}
		held, err := p.Index.CountHour(ctx, p.Source, r.Hour)
		if err != nil {
			return nil, err
		}
		if held < r.Events {
			out = append(out, ArchiveHour{Source: p.Source, Hour: r.Hour, Name: r.Object, FirstSeq: r.FirstSeq, LastSeq: r.LastSeq, Events: r.Events})
		}
	}
	return out, nil
}
