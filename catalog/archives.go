package catalog

import (
	"context"
	"math"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
)

// LoadArchives reads the archive records of source and the index's event
// counts of their hours.
func LoadArchives(ctx context.Context, store *index.Store, source string) ([]api.ArchivedHour, error) {
	recs, err := store.Archives(ctx, source)
	if err != nil {
		return nil, err
	}
	hours, err := store.HoursBefore(ctx, source, math.MaxUint32)
	if err != nil {
		return nil, err
	}
	inIndex := map[uint32]int64{}
	for _, h := range hours {
		inIndex[h.Hour] = h.Events
	}
	var out []api.ArchivedHour
	for _, r := range recs {
		out = append(out, api.ArchivedHour{Hour: change.HourTime(r.Hour), Events: r.Events, Bytes: r.Size, FirstSeq: r.FirstSeq,
			LastSeq: r.LastSeq, InIndex: inIndex[r.Hour], Location: r.Location, Object: r.Object,
			Confirmed: r.ConfirmedAt, Dropped: r.DroppedAt, SHA256: r.SHA256})
	}
	return out, nil
}
