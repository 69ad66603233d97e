package console

import (
	"fmt"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/api"
)

// The overview's plots of capture's lag and events/s over the last
// api.CaptureHistorySpan, from the samples capture records in the index
// (GET /v1/capture): of any source, from before this process started.

// LagKeep is how far back the plots reach.
const LagKeep = api.CaptureHistorySpan

// lagSample is one sample: the lag and the checkpoint's seq at a time.
type lagSample struct {
	At  time.Time
	Lag float64 // seconds; -1 before the first captured commit
	Seq uint64
}

// lagSamplesOf are the samples of a capture history.
func lagSamplesOf(h api.CaptureHistory) []lagSample {
	out := make([]lagSample, 0, len(h.Samples))
	for _, s := range h.Samples {
		l := lagSample{At: s.At, Lag: -1, Seq: s.LastSeq}
		if s.LagSeconds != nil {
			l.Lag = *s.LagSeconds
		}
		out = append(out, l)
	}
	return out
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
