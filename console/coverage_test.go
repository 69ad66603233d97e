package console

import (
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/api"
)

// TestCoverage: the answerable lane is the hours of changes (index or
// archive) from the oldest snapshot on; the lanes, snapshot ticks and gap
// lines fall on the axis; nothing at all draws an empty chart.
func TestCoverage(t *testing.T) {
	h0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	arch := []api.ArchivedHour{{Hour: h0, Events: 1}, {Hour: h0.Add(time.Hour), Events: 2}}
	idx := []api.IndexHour{{Hour: h0.Add(2 * time.Hour), Events: 3}, {Hour: h0.Add(3 * time.Hour), Events: 4}}
	snaps := []api.SnapshotEntry{{ID: "s2", CreatedAt: h0.Add(150 * time.Minute)}, {ID: "s1", CreatedAt: h0.Add(90 * time.Minute)}}
	gaps := []api.CaptureGap{{From: "b.1:4", To: "b.2:4", DetectedAt: h0.Add(3*time.Hour + 30*time.Minute)}, {DetectedAt: h0.Add(-48 * time.Hour)}}
	now := h0.Add(3*time.Hour + 40*time.Minute)
	c := newCoverage(arch, idx, snaps, gaps, now)
	if c.Empty || c.From != "2026-12-01 08:00Z" || c.To != "2026-12-01 12:00Z" || c.Seconds != 4*3600 {
		t.Fatalf("axis %s to %s (%d s)", c.From, c.To, c.Seconds)
	}
	if len(c.Lanes) != 3 || len(c.Lanes[0].Boxes) != 2 || len(c.Lanes[1].Boxes) != 2 {
		t.Fatalf("lanes %+v", c.Lanes)
	}
	// From s1 (09:30) on: the archived hour 09:00 and the two index hours.
	if ans := c.Lanes[2].Boxes; len(ans) != 3 || c.AnswerFrom != "2026-12-01 09:30:00Z" || c.AnswerTo != "2026-12-01 11:40:00Z" {
		t.Fatalf("answerable %+v from %s to %s", ans, c.AnswerFrom, c.AnswerTo)
	}
	if len(c.Snapshots) != 2 || len(c.Gaps) != 1 || c.Gaps[0].X <= c.Snapshots[0].X {
		t.Fatalf("snapshots %+v gaps %+v", c.Snapshots, c.Gaps)
	}
	for _, l := range c.Lanes {
		for _, b := range l.Boxes {
			if b.X < covLabel || b.X+b.W > covWidth {
				t.Fatalf("box %+v off the plot", b)
			}
		}
	}
	if none := newCoverage(nil, nil, nil, nil, now); !none.Empty {
		t.Fatalf("nothing drew %+v", none)
	}
	if noSnap := newCoverage(arch, idx, nil, nil, now); noSnap.AnswerFrom != "" || len(noSnap.Lanes[2].Boxes) != 0 {
		t.Fatalf("without a snapshot: %+v", noSnap)
	}
}
