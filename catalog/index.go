package catalog

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
)

// IndexWindow answers GET /v1/index: the hours of events the index holds
// of source (from chunk headers), the capture gaps and the last drill.
func (c *Catalog) IndexWindow(ctx context.Context, source string) (api.IndexWindow, error) {
	w := api.IndexWindow{Source: source, Hours: []api.IndexHour{}, Gaps: []api.CaptureGap{}}
	if c.Store == nil {
		return w, noIndex
	}
	hours, err := c.Store.HoursBefore(ctx, source, math.MaxUint32)
	if err != nil {
		return w, index.Explain(err)
	}
	for _, h := range hours {
		w.Hours = append(w.Hours, api.IndexHour{Hour: change.HourTime(h.Hour).UTC(), Events: h.Events, FirstSeq: h.FirstSeq, LastSeq: h.LastSeq})
		w.Events += h.Events
	}
	if n := len(w.Hours); n > 0 {
		from, to := w.Hours[0].Hour, w.Hours[n-1].Hour.Add(time.Hour)
		w.From, w.To = &from, &to
	}
	gaps, err := c.Store.Gaps(ctx, source)
	if err != nil {
		return w, index.Explain(err)
	}
	for _, g := range gaps {
		w.Gaps = append(w.Gaps, api.CaptureGap{From: fmt.Sprintf("%s:%d", g.FromFile, g.FromPos), FromGTID: g.FromGTID,
			To: fmt.Sprintf("%s:%d", g.ToFile, g.ToPos), Reason: g.Reason, DetectedAt: g.DetectedAt.UTC()})
	}
	d, ok, err := c.Store.LastDrill(ctx, source)
	if err != nil {
		return w, index.Explain(err)
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

// CaptureHistory answers GET /v1/capture: the capture samples of source
// the index holds for the last api.CaptureHistorySpan (none from an index
// older than the samples' table).
func (c *Catalog) CaptureHistory(ctx context.Context, source string) (api.CaptureHistory, error) {
	h := api.CaptureHistory{Source: source, Samples: []api.CaptureSample{}}
	if c.Store == nil {
		return h, noIndex
	}
	samples, err := c.Store.CaptureSamples(ctx, source, api.CaptureHistorySpan)
	if errors.Is(err, index.ErrNoCaptureSamples) {
		return h, nil
	}
	if err != nil {
		return h, index.Explain(err)
	}
	for _, s := range samples {
		cs := api.CaptureSample{At: s.At, LastSeq: s.LastSeq}
		if lag, ok := s.Lag(); ok {
			secs := lag.Seconds()
			cs.LagSeconds = &secs
		}
		h.Samples = append(h.Samples, cs)
	}
	return h, nil
}
