package console

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/dbtrail/dbtrail/api"
)

// Lag sampling: the overview's plot of capture's lag and events/s over
// the last hours, from samples this process takes of the catalog's capture
// state (the index's checkpoint) of the server's source.
const (
	// LagEvery is how often the lag is sampled.
	LagEvery = 30 * time.Second
	// LagKeep is how far back the plot reaches.
	LagKeep = 6 * time.Hour
)

// lagSample is one sample: the lag and the checkpoint's seq at a time.
type lagSample struct {
	At  time.Time
	Lag float64 // seconds; -1 before the first captured commit
	Seq uint64
}

// lagSamples is the samples of the last LagKeep, oldest first.
type lagSamples struct {
	mu      sync.Mutex
	samples []lagSample
}

func (l *lagSamples) add(s lagSample) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.samples = append(l.samples, s)
	i := 0
	for i < len(l.samples) && s.At.Sub(l.samples[i].At) > LagKeep {
		i++
	}
	l.samples = l.samples[i:]
}

func (l *lagSamples) list() []lagSample {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]lagSample(nil), l.samples...)
}

// SampleLag samples the capture state of the server's source every
// LagEvery, at once first, until ctx ends (without a catalog: returns at
// once). A failed read is logged and skipped.
func (c *Console) SampleLag(ctx context.Context) {
	if c.catalog == nil {
		return
	}
	t := time.NewTicker(LagEvery)
	defer t.Stop()
	for {
		if err := c.sampleLag(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("console: lag sample failed", slog.String("source", c.source), slog.String("error", err.Error()))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sampleLag takes one sample (none before capture's first checkpoint).
func (c *Console) sampleLag(ctx context.Context) error {
	v, err := c.catalog.Capture(ctx, c.source)
	if err != nil || v == nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var st api.CaptureStatus
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("capture status: %w", err)
	}
	if st.Checkpoint == nil {
		return nil
	}
	s := lagSample{At: time.Now(), Lag: -1, Seq: st.Checkpoint.LastSeq}
	if st.LagSeconds != nil {
		s.Lag = *st.LagSeconds
	}
	c.lags.add(s)
	return nil
}

// plot is one line chart: its points in SVG coordinates and its labels.
type plot struct {
	Width, Height int
	// Points is the polyline's points ("x,y x,y ..."); Dots each point.
	Points string
	Dots   []dot
	// Max is the value at the top of the chart, as text; From and To the
	// times at the left and right ends.
	Max, From, To string
	Samples       int
}

// dot is one point of a plot with its tooltip.
type dot struct {
	X, Y  int
	Title string
}

// lagPlots draws the lag and the events/s of the samples.
func lagPlots(samples []lagSample) (lag, rate plot) {
	var lagVals, rateVals []float64
	var lagAt, rateAt []time.Time
	for i, s := range samples {
		if s.Lag >= 0 {
			lagVals, lagAt = append(lagVals, s.Lag), append(lagAt, s.At)
		}
		if i > 0 {
			prev := samples[i-1]
			if d := s.At.Sub(prev.At).Seconds(); d > 0 && s.Seq >= prev.Seq {
				rateVals, rateAt = append(rateVals, float64(s.Seq-prev.Seq)/d), append(rateAt, s.At)
			}
		}
	}
	return draw(lagVals, lagAt, func(v float64) string { return span(time.Duration(v * float64(time.Second))) }),
		draw(rateVals, rateAt, func(v float64) string { return fmt.Sprintf("%.1f/s", v) })
}

// draw plots vals at times over the last LagKeep (or their own span when
// shorter), the top of the chart the largest value.
func draw(vals []float64, at []time.Time, label func(float64) string) plot {
	const width, height = 720, 100
	p := plot{Width: width, Height: height, Samples: len(vals)}
	if len(vals) == 0 {
		return p
	}
	top := 0.0
	for _, v := range vals {
		top = max(top, v)
	}
	if top == 0 {
		top = 1
	}
	from, to := at[0], at[len(at)-1]
	spanSec := max(to.Sub(from).Seconds(), 1)
	var pts []string
	for i, v := range vals {
		x := int(at[i].Sub(from).Seconds()/spanSec*float64(width-8)) + 4
		y := height - 4 - int(v/top*float64(height-8))
		pts = append(pts, fmt.Sprintf("%d,%d", x, y))
		p.Dots = append(p.Dots, dot{X: x, Y: y, Title: at[i].UTC().Format("15:04:05Z") + ": " + label(v)})
	}
	p.Points = strings.Join(pts, " ")
	p.Max, p.From, p.To = label(top), from.UTC().Format("2006-01-02 15:04Z"), to.UTC().Format("15:04Z")
	return p
}
