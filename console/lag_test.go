package console

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLagPlot: the overview draws the lag and events/s (from the seq's
// growth between samples) of the capture samples the API reads from the
// index, of the page's source; a source without samples says so.
func TestLagPlot(t *testing.T) {
	h, _ := newTest(t, false, true)
	b := &browser{t: t, h: h}
	b.login(roSecret)
	body := b.page("/", http.StatusOK)
	if !strings.Contains(body, `id="lag-plot"`) || !strings.Contains(body, `id="rate-plot"`) || strings.Count(body, "<circle") != 3 {
		t.Fatalf("overview with two samples:\n%s", body)
	}
	if body := b.page("/?source=other", http.StatusOK); !strings.Contains(body, "No sample of the last hours") || strings.Contains(body, `id="lag-plot"`) {
		t.Fatalf("overview of a source without samples:\n%s", body)
	}

	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	lag, rate := lagPlots([]lagSample{{At: t0, Lag: 1, Seq: 10}, {At: t0.Add(time.Minute), Lag: 3, Seq: 70}, {At: t0.Add(2 * time.Minute), Lag: -1, Seq: 70}})
	if lag.Samples != 2 || lag.Max != "3s" || len(lag.Dots) != 2 || lag.Dots[1].Y >= lag.Dots[0].Y {
		t.Fatalf("lag plot %+v", lag)
	}
	if rate.Samples != 2 || rate.Max != "1.0/s" || rate.Dots[1].Y != rate.Height-4 {
		t.Fatalf("rate plot %+v", rate)
	}
}
