package moment

import (
	"context"
	"fmt"
)

// DroppedHours lists the confirmed archived hours holding events with seq
// in (after, upto] that the index no longer holds whole: the events a
// reader of that range can only read from the archive location. A reader
// without one (Archive nil) refuses such a range, naming them, rather than
// answer without their events.
func (p Past) DroppedHours(ctx context.Context, after, upto uint64) ([]ArchiveHour, error) {
	hours, err := p.archiveFiles().Hours(ctx, p.Source, after, upto)
	if err != nil {
		return nil, fmt.Errorf("archived hours of %s: %w", p.Source, err)
	}
	var out []ArchiveHour
	for _, h := range hours {
		held, err := p.Index.CountHour(ctx, p.Source, h.Hour)
		if err != nil {
			return nil, err
		}
		if held < h.Events {
			out = append(out, h)
		}
	}
	return out, nil
}
