package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
)

// IndexWindow answers GET /v1/index: the hours of events the index holds
// of source (from chunk headers), the capture gaps and the last drill.
func (c *catalog) IndexWindow(ctx context.Context, source string) (api.IndexWindow, error) {
	w := api.IndexWindow{Source: source, Hours: []api.IndexHour{}, Gaps: []api.CaptureGap{}}
	if c.store == nil {
		return w, noIndex
	}
	hours, err := c.store.HoursBefore(ctx, source, math.MaxUint32)
	if err != nil {
		return w, explainIndexErr(err)
	}
	for _, h := range hours {
		w.Hours = append(w.Hours, api.IndexHour{Hour: change.HourTime(h.Hour).UTC(), Events: h.Events, FirstSeq: h.FirstSeq, LastSeq: h.LastSeq})
		w.Events += h.Events
	}
	if n := len(w.Hours); n > 0 {
		from, to := w.Hours[0].Hour, w.Hours[n-1].Hour.Add(time.Hour)
		w.From, w.To = &from, &to
	}
	gaps, err := c.store.Gaps(ctx, source)
	if err != nil {
		return w, explainIndexErr(err)
	}
	for _, g := range gaps {
		w.Gaps = append(w.Gaps, api.CaptureGap{From: fmt.Sprintf("%s:%d", g.FromFile, g.FromPos), FromGTID: g.FromGTID,
			To: fmt.Sprintf("%s:%d", g.ToFile, g.ToPos), Reason: g.Reason, DetectedAt: g.DetectedAt.UTC()})
	}
	d, ok, err := c.store.LastDrill(ctx, source)
	if err != nil {
		return w, explainIndexErr(err)
	}
	if ok {
		w.LastDrill = drillJSON(d)
	}
	return w, nil
}

// drillJSON is d as the API answers it.
func drillJSON(d index.Drill) *api.Drill {
	return &api.Drill{StartedAt: d.StartedAt.UTC(), FinishedAt: d.Finished.UTC(), Target: d.Target, Moment: d.Moment, Cut: d.Cut,
		Snapshot: d.Snapshot, Tables: d.Tables, Rows: d.Rows, Verdict: d.Verdict, Failure: d.Failure}
}
