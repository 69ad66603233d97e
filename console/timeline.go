package console

import (
	"fmt"
	"time"

	"github.com/dbtrail/dbtrail/api"
)

// timelineHours is the most hours the archive timeline draws (the newest).
const timelineHours = 72

// timeline is the archive timeline, drawn as an SVG bar chart: one bar per
// hour from the first archived hour drawn to the newest, its height the
// hour's events, a missing hour marked as a gap.
type timeline struct {
	Width, Height int
	Bars          []bar
	From, To      string
	Gaps          int
	MaxEvents     int64
	// Capture are the capture gaps detected within the drawn hours, a
	// line each at the hour they were detected in.
	Capture []mark
	first   time.Time
	barW    int
	hours   int
}

// bar is one hour of the timeline, in SVG coordinates.
type bar struct {
	X, Y, W, H int
	Gap        bool
	// Title is the hour's tooltip (and its accessible text).
	Title string
}

// newTimeline draws the newest timelineHours hours of hours (oldest first,
// as the API answers them); none: an empty timeline.
func newTimeline(hours []api.ArchivedHour) timeline {
	const width, height, barW = 720, 80, 10
	t := timeline{Width: width, Height: height}
	if len(hours) == 0 {
		return t
	}
	byHour := map[time.Time]api.ArchivedHour{}
	last := hours[len(hours)-1].Hour.UTC()
	first := hours[0].Hour.UTC()
	if span := int(last.Sub(first)/time.Hour) + 1; span > timelineHours {
		first = last.Add(-(timelineHours - 1) * time.Hour)
	}
	for _, h := range hours {
		byHour[h.Hour.UTC()] = h
		if h.Events > t.MaxEvents && !h.Hour.Before(first) {
			t.MaxEvents = h.Events
		}
	}
	n := int(last.Sub(first)/time.Hour) + 1
	w := min(barW, width/n)
	for i := range n {
		at := first.Add(time.Duration(i) * time.Hour)
		b := bar{X: i * w, W: max(w-1, 1)}
		h, ok := byHour[at]
		switch {
		case !ok:
			b.Gap, b.Y, b.H = true, 0, height
			b.Title = fmt.Sprintf("%s: not archived (a gap)", at.Format("2006-01-02 15:00Z"))
			t.Gaps++
		default:
			b.H = max(int(float64(h.Events)/float64(max(t.MaxEvents, 1))*float64(height-4)), 2)
			b.Y = height - b.H
			b.Title = fmt.Sprintf("%s: %d events, %d bytes, %s", at.Format("2006-01-02 15:00Z"), h.Events, h.Bytes, h.Location)
		}
		t.Bars = append(t.Bars, b)
	}
	t.From, t.To = first.Format("2006-01-02 15:00Z"), last.Format("2006-01-02 15:00Z")
	t.first, t.barW, t.hours = first, w, n
	return t
}

// markCapture marks the capture gaps detected within t's hours.
func (t *timeline) markCapture(gaps []api.CaptureGap) {
	for _, g := range gaps {
		at := g.DetectedAt.UTC()
		i := int(at.Sub(t.first) / time.Hour)
		if len(t.Bars) == 0 || at.Before(t.first) || i >= t.hours {
			continue
		}
		t.Capture = append(t.Capture, mark{X: i*t.barW + t.barW/2,
			Title: fmt.Sprintf("capture gap %s to %s (%s), detected %s", g.From, g.To, g.Reason, at.Format("2006-01-02 15:04Z"))})
	}
}
