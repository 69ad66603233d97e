package retention

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// snaps returns one snapshot per entry of ages (days before now), the seq
// of the i-th being 100*(i+1).
func snaps(ages ...float64) []Snapshot {
	out := make([]Snapshot, len(ages))
	for i, a := range ages {
		made := now.Add(-time.Duration(a * float64(Day)))
		out[i] = Snapshot{ID: made.Format("20060102T150405Z"), Made: made, Seq: uint64(100 * (i + 1))}
	}
	return out
}

// hours returns one confirmed, dropped archived hour per entry of ages
// (days before now); hour i holds seqs 50*i+1 .. 50*(i+1).
func hours(ages ...float64) []Hour {
	out := make([]Hour, len(ages))
	for i, a := range ages {
		st := now.Add(-time.Duration(a * float64(Day))).Truncate(time.Hour)
		out[i] = Hour{Name: fmt.Sprintf("h%d", i), Start: st, FirstSeq: uint64(50*i + 1), LastSeq: uint64(50 * (i + 1)), Confirmed: true, Dropped: true}
	}
	return out
}

func local(s []Snapshot, current int) Place {
	p := Place{Name: PlaceLocal, Snapshots: s}
	if current >= 0 {
		p.Current = s[current].ID
	}
	return p
}

// removed lists the plan's removals as "place:index" against the input's
// order of each place's snapshots (index in the sorted ages) and hour names.
func removed(in Input, p Plan) []string {
	var out []string
	for _, it := range p.Removals() {
		name := it.ID
		for _, pl := range in.Places {
			for i, s := range pl.Snapshots {
				if s.ID == it.ID && pl.Name == it.Place {
					name = fmt.Sprintf("%s:%d", pl.Name, i)
				}
			}
		}
		out = append(out, name)
	}
	return out
}

func TestMake(t *testing.T) {
	five := snaps(10, 8, 6, 4, 2) // seqs 100..500
	for _, tc := range []struct {
		name string
		in   Input
		want []string
		// reason of one kept item, by its place:index
		kept, reason string
	}{
		{name: "newest n only",
			in:   Input{Policy: Policy{KeepSnapshots: 2}, Places: []Place{local(five, 4)}},
			want: []string{"local:0", "local:1", "local:2"}},
		{name: "keep all", in: Input{Policy: Policy{KeepSnapshots: -1}, Places: []Place{local(five, 4)}}},
		{name: "current is never removed even when old",
			in:   Input{Policy: Policy{KeepSnapshots: 1}, Places: []Place{local(five, 1)}},
			want: []string{"local:0"}, kept: "local:1", reason: "current"},
		{name: "newer than current kept (publish in progress)",
			in:   Input{Policy: Policy{KeepSnapshots: 1}, Places: []Place{local(five, 2)}},
			want: []string{"local:0", "local:1"}, kept: "local:3", reason: "newer than current"},
		{name: "no current link: newest n",
			in:   Input{Policy: Policy{KeepSnapshots: 1}, Places: []Place{local(five, -1)}},
			want: []string{"local:0", "local:1", "local:2", "local:3"}},
		{name: "keep days",
			in:   Input{Policy: Policy{KeepSnapshots: 1, KeepDays: 5}, WindowCut: 250, Places: []Place{local(five, 4)}},
			want: []string{"local:0", "local:2"}, kept: "local:3", reason: "made in the last 5 days"},
		{name: "window base kept: newest at or before the window cut",
			// window 7 days: cut 250 lies between snapshot 1 (seq 200) and 2 (seq 300)
			in:   Input{Policy: Policy{KeepSnapshots: 1, ArchiveKeepDays: 7}, WindowCut: 250, Places: []Place{local(five, 4)}},
			want: []string{"local:0", "local:2", "local:3"}, kept: "local:1", reason: "base of the kept window"},
		{name: "window cut exactly at a snapshot",
			in:   Input{Policy: Policy{KeepSnapshots: 1, ArchiveKeepDays: 7}, WindowCut: 300, Places: []Place{local(five, 4)}},
			want: []string{"local:0", "local:1", "local:3"}, kept: "local:2", reason: "base"},
		{name: "window before every transaction: the oldest is the base",
			in:   Input{Policy: Policy{KeepSnapshots: 1, ArchiveKeepDays: 30}, WindowCut: 0, Places: []Place{local(five, 4)}},
			want: []string{"local:1", "local:2", "local:3"}, kept: "local:0", reason: "base"},
		{name: "a running reader holds everything",
			in: Input{Policy: Policy{KeepSnapshots: 1, ArchiveKeepDays: 1}, Readers: []string{"Export export-main-x"},
				Places: []Place{local(five, 4)}, Archives: hours(9, 8)},
			kept: "local:0", reason: "a running job reads the source: Export export-main-x"},
		{name: "held (remote copy not confirmed)",
			in: Input{Policy: Policy{KeepSnapshots: 1}, Places: []Place{func() Place {
				p := local(five, 4)
				p.Held = map[string]string{five[1].ID: "remote copy not confirmed"}
				return p
			}()}},
			want: []string{"local:0", "local:2", "local:3"}, kept: "local:1", reason: "remote copy not confirmed"},
		{name: "places are planned apart",
			in: Input{Policy: Policy{KeepSnapshots: 2}, Places: []Place{local(five[3:], 1),
				{Name: PlaceRemote, Snapshots: five, Current: five[4].ID}}},
			want: []string{"remote:0", "remote:1", "remote:2"}},
		{name: "archives: hours before the oldest kept snapshot go, later ones stay",
			// archive window 3 days, cut 150 (base: snapshot 0, seq 100); hours 0,1 (seqs 1..100) at or before it
			in: Input{Policy: Policy{KeepSnapshots: 1, ArchiveKeepDays: 3}, WindowCut: 150,
				Places: []Place{local(five, 4)}, Archives: hours(11, 10.5, 9, 1)},
			want: []string{"local:1", "local:2", "local:3", "h0", "h1"}, kept: "h2", reason: "after the oldest kept snapshot"},
		{name: "archives: an old remote snapshot keeps the hours after it",
			in: Input{Policy: Policy{KeepSnapshots: 1, ArchiveKeepDays: 1}, WindowCut: 450,
				Places:   []Place{local(five, 4), {Name: PlaceRemote, Snapshots: five[:1], Current: five[0].ID}},
				Archives: hours(11, 10.5, 9, 8)},
			want: []string{"local:0", "local:1", "local:2", "h0", "h1"}, kept: "h3", reason: "after the oldest kept snapshot"},
		{name: "archives inside the window are kept",
			in: Input{Policy: Policy{KeepSnapshots: 5, ArchiveKeepDays: 12}, WindowCut: 0,
				Places: []Place{local(five, 4)}, Archives: hours(11, 10.5)},
			kept: "h0", reason: "inside the kept window"},
		{name: "archive keep days 0 keeps every hour",
			in: Input{Policy: Policy{KeepSnapshots: 1, KeepDays: 1}, WindowCut: 450,
				Places: []Place{local(five, 4)}, Archives: hours(11)},
			want: []string{"local:0", "local:1", "local:2"}, kept: "h0", reason: "keeps every archived hour"},
		{name: "archives not confirmed or not dropped are kept",
			in: Input{Policy: Policy{KeepSnapshots: 1, ArchiveKeepDays: 1}, WindowCut: 450,
				Places: []Place{local(five, 4)}, Archives: func() []Hour {
					h := hours(11, 10)
					h[0].Confirmed, h[1].Dropped = false, false
					return h
				}()},
			want: []string{"local:0", "local:1", "local:2"}, kept: "h1", reason: "the index still holds"},
		{name: "no snapshot kept: archives stay",
			in:   Input{Policy: Policy{KeepSnapshots: 1, ArchiveKeepDays: 1}, Archives: hours(11)},
			kept: "h0", reason: "no snapshot is kept"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Now = now
			p := Make(tc.in)
			if got := removed(tc.in, p); !slices.Equal(got, tc.want) {
				t.Fatalf("removed %v, want %v\nplan %+v", got, tc.want, p.Items)
			}
			if tc.kept == "" {
				return
			}
			for _, it := range p.Items {
				if name := removedName(tc.in, it); name == tc.kept {
					if !it.Keep || !strings.Contains(it.Reason, tc.reason) {
						t.Fatalf("%s: keep %v reason %q, want kept: %q", tc.kept, it.Keep, it.Reason, tc.reason)
					}
					return
				}
			}
			t.Fatalf("%s not in the plan %+v", tc.kept, p.Items)
		})
	}
}

func removedName(in Input, it Item) string {
	for _, pl := range in.Places {
		for i, s := range pl.Snapshots {
			if s.ID == it.ID && pl.Name == it.Place {
				return fmt.Sprintf("%s:%d", pl.Name, i)
			}
		}
	}
	return it.ID
}

// TestMakeNeverBreaksAMoment checks the contract on many policies: every
// moment from the window's cut on has a kept snapshot at or before it (in
// some place) from which every later event is kept, and nothing removed is
// current.
func TestMakeNeverBreaksAMoment(t *testing.T) {
	all := snaps(20, 15, 11, 9, 6, 3, 1, 0.1)
	hs := hours(21, 19, 17, 14, 12, 10, 9.5, 8, 7, 5, 2, 0.5) // seqs 1..600
	for n := 1; n <= 4; n++ {
		for kd := 0; kd <= 12; kd += 4 {
			for ad := 0; ad <= 16; ad += 4 {
				for cut := uint64(0); cut <= 600; cut += 50 {
					in := Input{Now: now, Policy: Policy{KeepSnapshots: n, KeepDays: kd, ArchiveKeepDays: ad}, WindowCut: cut,
						Places: []Place{local(all[3:], 4), {Name: PlaceRemote, Snapshots: all[:6], Current: all[5].ID}}, Archives: hs}
					p := Make(in)
					checkMoments(t, in, p)
				}
			}
		}
	}
}

func checkMoments(t *testing.T, in Input, p Plan) {
	t.Helper()
	keptSnaps := map[uint64]bool{}
	for _, it := range p.Items {
		if it.Place != PlaceArchive && it.Keep {
			keptSnaps[it.Seq] = true
		}
		for _, pl := range in.Places {
			if !it.Keep && it.Place == pl.Name && it.ID == pl.Current {
				t.Fatalf("policy %+v removes the current snapshot %s", in.Policy, it.ID)
			}
		}
	}
	gone := map[uint64]bool{}
	for _, it := range p.Removals() {
		for _, h := range in.Archives {
			if h.Name == it.ID {
				for s := h.FirstSeq; s <= h.LastSeq; s++ {
					gone[s] = true
				}
			}
		}
	}
	removedHour := func(seq uint64) bool { return gone[seq] }
	if _, ok := in.Policy.WindowStart(now); !ok {
		return
	}
	for m := max(in.WindowCut, 1); m <= 600; m++ {
		var base uint64
		found := false
		for s := range keptSnaps {
			if s <= m && (!found || s > base) {
				base, found = s, true
			}
		}
		if !found {
			if m >= 100 && in.WindowCut >= 100 { // a snapshot existed at or before the window's cut
				t.Fatalf("policy %+v cut %d: no kept snapshot at or before moment %d", in.Policy, in.WindowCut, m)
			}
			continue
		}
		for s := base + 1; s <= m; s++ {
			if removedHour(s) {
				t.Fatalf("policy %+v cut %d: moment %d from base %d needs event %d of a removed hour", in.Policy, in.WindowCut, m, base, s)
			}
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	if err := (Policy{KeepDays: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "--keep-days") {
		t.Fatalf("negative keep days: %v", err)
	}
	if err := (Policy{ArchiveKeepDays: -2}).Validate(); err == nil || !strings.Contains(err.Error(), "--archive-keep-days") {
		t.Fatalf("negative archive keep days: %v", err)
	}
	if start, ok := (Policy{KeepDays: 2, ArchiveKeepDays: 3}).WindowStart(now); !ok || !start.Equal(now.Add(-3*Day)) {
		t.Fatalf("window start %v %v", start, ok)
	}
}

func TestHoursAfter(t *testing.T) {
	five := snaps(10, 8, 6, 4, 2)
	in := Input{Now: now, Policy: Policy{KeepSnapshots: 1, ArchiveKeepDays: 1}, WindowCut: 450,
		Places: []Place{{Name: PlaceRemote, Snapshots: five, Current: five[4].ID}}, Archives: hours(11, 10.5, 9.5, 9, 8.5, 8, 7.5, 7, 6.5)}
	p := Make(in)
	// seqs: snapshots 100..500 (base 400), hours 50 each: hours 0..7 at or before 400
	all, _ := p.HoursAfter(nil)
	if len(all) != 8 {
		t.Fatalf("nothing failed: %d hours removed, want 8: %+v", len(all), all)
	}
	// snapshot 1 (seq 200) could not be removed: hours after seq 200 stay
	remove, keep := p.HoursAfter(map[string]bool{PlaceRemote + "/" + five[1].ID: true})
	if len(remove) != 4 || remove[3].ID != "h3" || len(keep) != 4 || !strings.Contains(keep[0].Reason, five[1].ID) {
		t.Fatalf("snapshot %s left: remove %+v keep %+v", five[1].ID, remove, keep)
	}
}
