// Package retention decides what dbtrail removes from the places a source's
// data lives: its local snapshots, its snapshots on object storage and its
// hourly archives. Make is a pure function of a listing, a policy and what
// running jobs read; it returns a decision with its reason for every item,
// computed before anything is removed (restic's ApplyPolicy is the model).
// Apply executes a plan, place by place, through removers the caller gives
// (the ApplyRetention activity: publish lock, store, index; docs/retention.md).
//
// What is never removed:
//   - a place's current snapshot, and any snapshot newer than it (a publish
//     or an upload that has not moved the pointer yet);
//   - anything of the source while a job that reads it runs (Readers);
//   - a local snapshot whose remote copy is not confirmed (Place.Held);
//   - what rebuilding any moment inside the kept window needs: the newest
//     snapshot at or before the window's start in each place (the base of
//     its oldest moment), and every archived hour holding an event after
//     the oldest snapshot kept anywhere. An archived hour is removed only
//     when each of its events is at or before every kept snapshot, so a
//     rebuild, which starts from a kept snapshot, never needs a removed
//     hour: no moment is ever answered from an incomplete stream.
package retention

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Day is the unit of the policy's ages.
const Day = 24 * time.Hour

// Place names, as plans and results report them.
const (
	PlaceLocal   = "local"
	PlaceRemote  = "remote"
	PlaceArchive = "archive"
	// PlaceObject is a content object of remote snapshots (objects.go).
	PlaceObject = "object"
)

// DefaultKeepSnapshots is the snapshots a worker keeps in each place when
// its operator gives no --keep-snapshots (a day of 5-minute refreshes is
// 288).
const DefaultKeepSnapshots = 36

// Policy is what the operator asks to keep. It is the worker's
// configuration (activities.Activities.Retention): no workflow input
// carries one.
type Policy struct {
	// KeepSnapshots keeps the newest n published snapshots of each place
	// (local folder, object store). n <= 0 keeps every snapshot.
	KeepSnapshots int `json:"keep_snapshots"`
	// KeepDays keeps every snapshot made in the last d days (by the time in
	// its id). 0: no age rule.
	KeepDays int `json:"keep_days,omitempty"`
	// ArchiveKeepDays keeps the archived hours of the last d days. 0 keeps
	// every archived hour.
	ArchiveKeepDays int `json:"archive_keep_days,omitempty"`
}

// Validate refuses negative ages.
func (p Policy) Validate() error {
	if p.KeepDays < 0 {
		return fmt.Errorf("--keep-days %d: want 0 (no age rule) or more", p.KeepDays)
	}
	if p.ArchiveKeepDays < 0 {
		return fmt.Errorf("--archive-keep-days %d: want 0 (keep every archive) or more", p.ArchiveKeepDays)
	}
	return nil
}

// WindowDays is the kept window's length in days: the longer of KeepDays
// and ArchiveKeepDays; 0 when neither is set (no window).
func (p Policy) WindowDays() int { return max(p.KeepDays, p.ArchiveKeepDays) }

// WindowStart is the oldest moment of the kept window at now; ok is false
// when the policy has no window.
func (p Policy) WindowStart(now time.Time) (start time.Time, ok bool) {
	d := p.WindowDays()
	if d == 0 {
		return time.Time{}, false
	}
	return now.Add(-time.Duration(d) * Day).UTC(), true
}

// Snapshot is one published snapshot in a place.
type Snapshot struct {
	ID string `json:"id"`
	// Made is when it was made (the time its id names).
	Made time.Time `json:"made"`
	// Seq is the seq of its position: the last event it holds.
	Seq uint64 `json:"seq"`
}

// Place is the snapshots of one place (local folder or object store).
type Place struct {
	Name      string     `json:"name"`
	Snapshots []Snapshot `json:"snapshots"`
	// Current is the snapshot the place's current pointer names ("" when
	// there is none).
	Current string `json:"current,omitempty"`
	// Held names snapshots kept whatever the policy, with the reason (a
	// local snapshot whose remote copy is not confirmed).
	Held map[string]string `json:"held,omitempty"`
}

// Hour is one archived hour.
type Hour struct {
	// Name is the hour file's name in the store.
	Name string `json:"name"`
	// Start is the start of the hour (UTC).
	Start             time.Time `json:"start"`
	FirstSeq, LastSeq uint64
	// Confirmed: the stored file was read back and found whole. Dropped:
	// its events left the index.
	Confirmed bool `json:"confirmed"`
	Dropped   bool `json:"dropped"`
}

// Input is everything Make depends on.
type Input struct {
	Now    time.Time `json:"now"`
	Policy Policy    `json:"policy"`
	// Places are the snapshot places (local, remote), each planned apart.
	Places []Place `json:"places"`
	// Archives are the source's archived hours (nil without an archive
	// location).
	Archives []Hour `json:"archives,omitempty"`
	// WindowCut is the seq of the last transaction committed at or before
	// the window's start (0 when none is: every captured transaction is
	// inside the window).
	WindowCut uint64 `json:"window_cut"`
	// Readers are the running jobs that read the source's snapshots or
	// archives (workflow type and id): while any runs nothing is removed.
	Readers []string `json:"readers,omitempty"`
}

// Item is the decision about one snapshot or archived hour.
type Item struct {
	Place  string    `json:"place"`
	ID     string    `json:"id"` // snapshot id, or the hour file's name
	Time   time.Time `json:"time"`
	Seq    uint64    `json:"seq"` // a snapshot's seq, an hour's last seq
	Keep   bool      `json:"keep"`
	Reason string    `json:"reason"`
}

// Plan is what a retention run keeps and removes.
type Plan struct {
	Policy Policy `json:"policy"`
	// WindowStart is the oldest moment of the kept window (zero: none).
	WindowStart time.Time `json:"window_start,omitzero"`
	// Oldest is the oldest snapshot kept in any place ("" when none is):
	// archived hours after it are kept.
	Oldest string `json:"oldest,omitempty"`
	Items  []Item `json:"items"`
}

// Removals returns the items the plan removes, in plan order.
func (p Plan) Removals() []Item {
	var out []Item
	for _, it := range p.Items {
		if !it.Keep {
			out = append(out, it)
		}
	}
	return out
}

// Make decides every snapshot of every place, then every archived hour.
// Items come place by place, oldest first. The first rule that keeps an
// item gives its reason.
func Make(in Input) Plan {
	plan := Plan{Policy: in.Policy}
	start, window := in.Policy.WindowStart(in.Now)
	if window {
		plan.WindowStart = start
	}
	oldest, oldestSeq := "", uint64(0)
	for _, pl := range in.Places {
		items := planPlace(in, pl, start, window)
		for _, it := range items {
			if it.Keep && (oldest == "" || it.Seq < oldestSeq) {
				oldest, oldestSeq = it.ID, it.Seq
			}
		}
		plan.Items = append(plan.Items, items...)
	}
	plan.Oldest = oldest
	plan.Items = append(plan.Items, planArchives(in, start, oldest, oldestSeq)...)
	return plan
}

// planPlace decides the snapshots of one place.
func planPlace(in Input, pl Place, start time.Time, window bool) []Item {
	snaps := slices.Clone(pl.Snapshots)
	slices.SortFunc(snaps, func(a, b Snapshot) int { return cmp.Compare(a.ID, b.ID) })
	base := windowBase(snaps, in.WindowCut, window)
	n := in.Policy.KeepSnapshots
	items := make([]Item, len(snaps))
	for i, s := range snaps {
		it := Item{Place: pl.Name, ID: s.ID, Time: s.Made, Seq: s.Seq, Keep: true}
		switch {
		case s.ID == pl.Current:
			it.Reason = "current"
		case pl.Current != "" && s.ID > pl.Current:
			it.Reason = "newer than current: a publish or upload in progress"
		case len(in.Readers) > 0:
			it.Reason = "a running job reads the source: " + in.Readers[0]
		case n <= 0:
			it.Reason = "--keep-snapshots keeps every snapshot"
		case i >= len(snaps)-n:
			it.Reason = fmt.Sprintf("among the newest %d", n)
		case in.Policy.KeepDays > 0 && s.Made.After(in.Now.Add(-time.Duration(in.Policy.KeepDays)*Day)):
			it.Reason = fmt.Sprintf("made in the last %d days", in.Policy.KeepDays)
		case s.ID == base:
			it.Reason = "base of the kept window's oldest moment " + start.Format(time.RFC3339)
		case pl.Held[s.ID] != "":
			it.Reason = pl.Held[s.ID]
		default:
			it.Keep = false
			it.Reason = removeReason(in.Policy, n, window, start)
		}
		items[i] = it
	}
	return items
}

// windowBase is the snapshot a rebuild at the window's start starts from:
// the newest at or before its cut (greatest seq, then id, as
// moment.ChooseBase), or the oldest when none is (every moment of the
// window from the oldest snapshot on starts there or later).
func windowBase(snaps []Snapshot, cut uint64, window bool) string {
	if !window || len(snaps) == 0 {
		return ""
	}
	best, found := Snapshot{}, false
	oldest := snaps[0]
	for _, s := range snaps {
		if s.Seq < oldest.Seq || (s.Seq == oldest.Seq && s.ID < oldest.ID) {
			oldest = s
		}
		if cut > 0 && s.Seq <= cut && (!found || s.Seq > best.Seq || (s.Seq == best.Seq && s.ID > best.ID)) {
			best, found = s, true
		}
	}
	if found {
		return best.ID
	}
	return oldest.ID
}

func removeReason(p Policy, n int, window bool, start time.Time) string {
	r := fmt.Sprintf("not among the newest %d", n)
	if p.KeepDays > 0 {
		r += fmt.Sprintf(", made more than %d days ago", p.KeepDays)
	}
	if window {
		r += ", not needed for the kept window from " + start.Format(time.RFC3339)
	}
	return r
}

// planArchives decides the archived hours. oldest is the oldest snapshot
// kept anywhere and oldestSeq its seq.
func planArchives(in Input, start time.Time, oldest string, oldestSeq uint64) []Item {
	hours := slices.Clone(in.Archives)
	slices.SortFunc(hours, func(a, b Hour) int { return a.Start.Compare(b.Start) })
	days := in.Policy.ArchiveKeepDays
	items := make([]Item, len(hours))
	for i, h := range hours {
		it := Item{Place: PlaceArchive, ID: h.Name, Time: h.Start, Seq: h.LastSeq, Keep: true}
		switch {
		case days == 0:
			it.Reason = "--archive-keep-days 0 keeps every archived hour"
		case !h.Confirmed:
			it.Reason = "not confirmed on the store yet"
		case !h.Dropped:
			it.Reason = "the index still holds the hour"
		case len(in.Readers) > 0:
			it.Reason = "a running job reads the source: " + in.Readers[0]
		case h.Start.Add(time.Hour).After(start):
			it.Reason = fmt.Sprintf("inside the kept window (from %s)", start.Format(time.RFC3339))
		case oldest == "":
			it.Reason = "no snapshot is kept: the archives are the only past"
		case h.LastSeq > oldestSeq:
			it.Reason = "holds events after the oldest kept snapshot " + oldest
		default:
			it.Keep = false
			it.Reason = fmt.Sprintf("older than %d days and before the oldest kept snapshot %s", days, oldest)
		}
		items[i] = it
	}
	return items
}

// HoursAfter returns which of the plan's archived-hour removals may still
// go once the snapshot removals are done, given notRemoved: the snapshot
// removals that did not happen (place + "/" + id; a delete refused by
// Object Lock, a failure). Such a snapshot stays a base a rebuild may
// start from, so every hour holding an event after it stays too; the
// others in keep carry the reason.
func (p Plan) HoursAfter(notRemoved map[string]bool) (remove, keep []Item) {
	oldest, oldestSeq := "", uint64(0)
	for _, it := range p.Items {
		if it.Place == PlaceArchive || (!it.Keep && !notRemoved[it.Place+"/"+it.ID]) {
			continue
		}
		if oldest == "" || it.Seq < oldestSeq {
			oldest, oldestSeq = it.Place+" "+it.ID, it.Seq
		}
	}
	for _, it := range p.Removals() {
		if it.Place != PlaceArchive {
			continue
		}
		if oldest != "" && it.Seq > oldestSeq {
			it.Keep, it.Reason = true, "holds events after snapshot "+oldest+", which could not be removed"
			keep = append(keep, it)
			continue
		}
		remove = append(remove, it)
	}
	return remove, keep
}
