package console

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLagPlot: samples of the catalog's capture state draw the overview's
// lag plot (and, from the second sample, events/s from the seq's growth);
// samples older than LagKeep are dropped.
func TestLagPlot(t *testing.T) {
	h, _ := newTest(t, false, true)
	c := h.(*Console)
	b := &browser{t: t, h: h}
	b.login(roSecret)
	if body := b.page("/", http.StatusOK); !strings.Contains(body, "No sample yet") || strings.Contains(body, `id="lag-plot"`) {
		t.Fatalf("overview before a sample:\n%s", body)
	}
	if err := c.sampleLag(context.Background()); err != nil {
		t.Fatal(err)
	}
	body := b.page("/", http.StatusOK)
	if !strings.Contains(body, `id="lag-plot"`) || strings.Count(body, "<circle") != 1 || !strings.Contains(body, "after the second sample") {
		t.Fatalf("overview after one sample:\n%s", body)
	}

	var l lagSamples
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	l.add(lagSample{At: t0, Lag: 1, Seq: 10})
	l.add(lagSample{At: t0.Add(time.Minute), Lag: 3, Seq: 70})
	l.add(lagSample{At: t0.Add(2 * time.Minute), Lag: -1, Seq: 70})
	lag, rate := lagPlots(l.list())
	if lag.Samples != 2 || lag.Max != "3s" || len(lag.Dots) != 2 || lag.Dots[1].Y >= lag.Dots[0].Y {
		t.Fatalf("lag plot %+v", lag)
	}
	if rate.Samples != 2 || rate.Max != "1.0/s" || rate.Dots[1].Y != rate.Height-4 {
		t.Fatalf("rate plot %+v", rate)
	}
	l.add(lagSample{At: t0.Add(LagKeep + 90*time.Second), Lag: 0, Seq: 80})
	if got := l.list(); len(got) != 2 || !got[0].At.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("samples after LagKeep: %+v", got)
	}
}
