package console

import (
	"fmt"
	"time"

	"github.com/dbtrail/dbtrail/api"
)

// coverageHours is the most hours the coverage chart draws (the newest).
const coverageHours = 7 * 24

// coverage is the chart under the moment picker: on one time axis, a lane
// of the archived hours, one of the hours the index holds, one of the
// snapshots (a tick at each one's creation), the capture gaps across all
// lanes, and a lane of what can be answered: an hour of changes (index or
// archive) at or after the oldest snapshot. A click on it picks that time
// (console.js); every mark has a text title.
type coverage struct {
	Width, Height int
	From, To      string
	// FromUnix and Seconds map an x to a time for the picker: t = FromUnix
	// + x/Width*Seconds.
	FromUnix, Seconds int64
	Lanes             []lane
	Gaps              []mark
	Snapshots         []mark
	// Answerable is the first and last answerable hour ("" for none).
	AnswerFrom, AnswerTo string
	Empty                bool
}

// lane is one row of hour boxes.
type lane struct {
	Name  string
	Class string
	Y     int
	Boxes []bar
}

// mark is a point in time drawn as a line or tick; Moment, when set, is
// the exact moment a click on it picks (a snapshot's cut).
type mark struct {
	X      int
	Title  string
	Moment string
}

// coverageLayout is the chart's geometry: the lanes' height and label
// width.
const (
	covWidth  = 960
	covLabel  = 110
	covLaneH  = 18
	covLaneGp = 6
)

// newCoverage draws archived, indexed (oldest first each), the snapshots
// (any order) and the capture gaps; now ends the axis when it is later
// than every mark.
func newCoverage(archived []api.ArchivedHour, indexed []api.IndexHour, snaps []api.SnapshotEntry, gaps []api.CaptureGap, now time.Time) coverage {
	var lo, hi time.Time
	see := func(t time.Time) {
		if t.IsZero() {
			return
		}
		if lo.IsZero() || t.Before(lo) {
			lo = t
		}
		if t.After(hi) {
			hi = t
		}
	}
	for _, h := range archived {
		see(h.Hour.UTC())
		see(h.Hour.UTC().Add(time.Hour))
	}
	for _, h := range indexed {
		see(h.Hour.UTC())
		see(h.Hour.UTC().Add(time.Hour))
	}
	for _, s := range snaps {
		see(s.CreatedAt.UTC())
	}
	if lo.IsZero() {
		return coverage{Empty: true}
	}
	see(now.UTC())
	lo = lo.Truncate(time.Hour)
	if !hi.Equal(hi.Truncate(time.Hour)) {
		hi = hi.Truncate(time.Hour).Add(time.Hour)
	}
	if hi.Sub(lo) > coverageHours*time.Hour {
		lo = hi.Add(-coverageHours * time.Hour)
	}
	c := coverage{Width: covWidth, From: lo.Format("2006-01-02 15:04Z"), To: hi.Format("2006-01-02 15:04Z"),
		FromUnix: lo.Unix(), Seconds: int64(hi.Sub(lo) / time.Second)}
	span := float64(hi.Sub(lo))
	plot := float64(covWidth - covLabel)
	x := func(t time.Time) int { return covLabel + int(float64(t.Sub(lo))/span*plot) }
	box := func(h time.Time, title string) (bar, bool) {
		if h.Add(time.Hour).Before(lo) || !h.Before(hi) {
			return bar{}, false
		}
		x0, x1 := x(maxTime(h, lo)), x(h.Add(time.Hour))
		return bar{X: x0, W: max(x1-x0, 1), H: covLaneH, Title: title}, true
	}
	snapAt := time.Time{}
	for _, s := range snaps {
		if snapAt.IsZero() || s.CreatedAt.Before(snapAt) {
			snapAt = s.CreatedAt
		}
	}
	answer := map[time.Time]bool{}
	arch := lane{Name: "archived", Class: "archived"}
	for _, h := range archived {
		at := h.Hour.UTC()
		if b, ok := box(at, fmt.Sprintf("%s: archived, %d events (%s)", at.Format("2006-01-02 15:00Z"), h.Events, h.Location)); ok {
			arch.Boxes = append(arch.Boxes, b)
		}
		answer[at] = true
	}
	idx := lane{Name: "in the index", Class: "indexed"}
	for _, h := range indexed {
		at := h.Hour.UTC()
		if b, ok := box(at, fmt.Sprintf("%s: in the index, %d events, seq %d to %d", at.Format("2006-01-02 15:00Z"), h.Events, h.FirstSeq, h.LastSeq)); ok {
			idx.Boxes = append(idx.Boxes, b)
		}
		answer[at] = true
	}
	ans := lane{Name: "answerable", Class: "answerable"}
	var first, last time.Time
	for h := lo; h.Before(hi); h = h.Add(time.Hour) {
		if !answer[h] || snapAt.IsZero() || h.Add(time.Hour).Before(snapAt) {
			continue
		}
		if first.IsZero() {
			first = maxTime(h, snapAt)
		}
		last = h.Add(time.Hour)
		if b, ok := box(h, fmt.Sprintf("%s: a moment of this hour can be exported and restored", h.Format("2006-01-02 15:00Z"))); ok {
			ans.Boxes = append(ans.Boxes, b)
		}
	}
	if !first.IsZero() {
		c.AnswerFrom, c.AnswerTo = first.UTC().Format("2006-01-02 15:04:05Z"), minTime(last, now.UTC()).Format("2006-01-02 15:04:05Z")
	}
	for i, l := range []*lane{&arch, &idx, &ans} {
		l.Y = i * (covLaneH + covLaneGp)
		for j := range l.Boxes {
			l.Boxes[j].Y = l.Y
		}
		c.Lanes = append(c.Lanes, *l)
	}
	c.Height = 4*(covLaneH+covLaneGp) + 14
	for _, s := range snaps {
		if t := s.CreatedAt.UTC(); !t.Before(lo) {
			c.Snapshots = append(c.Snapshots, mark{X: x(t), Title: fmt.Sprintf("snapshot %s, %s, cut %s", s.ID, t.Format("2006-01-02 15:04:05Z"), snapshotMoment(s)),
				Moment: snapshotMoment(s)})
		}
	}
	for _, g := range gaps {
		if t := g.DetectedAt.UTC(); !t.Before(lo) && t.Before(hi) {
			c.Gaps = append(c.Gaps, mark{X: x(t), Title: fmt.Sprintf("capture gap %s to %s (%s), detected %s", g.From, g.To, g.Reason, t.Format("2006-01-02 15:04Z"))})
		}
	}
	return c
}

// SnapY is the snapshot lane's top.
func (c coverage) SnapY() int { return 3 * (covLaneH + covLaneGp) }

// LabelY is y of a lane's label baseline.
func (l lane) LabelY() int { return l.Y + covLaneH - 5 }

// BottomY is the y of the axis labels.
func (c coverage) BottomY() int { return c.Height - 2 }

// PlotX is the plot area's left edge.
func (c coverage) PlotX() int { return covLabel }

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
