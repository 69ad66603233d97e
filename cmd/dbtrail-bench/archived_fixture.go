package main

import (
	"context"
	"fmt"
	"time"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// archivedStore is one archive location the archived benchmarks read from.
type archivedStore struct {
	name  string // for the results
	store storage.Store
	reqs  *countingTransport // its HTTP requests; nil for a local folder
}

// hourCommit returns the commit time of the i-th of n events spread evenly
// over the hours starting at hours[0], hours[1], ...: the events of each
// hour in order, a few per second, times of microseconds.
func hourCommit(hours []time.Time, n int) func(i int) time.Time {
	per := (n + len(hours) - 1) / len(hours)
	step := (3599 * time.Second / time.Duration(max(per, 1))).Truncate(time.Microsecond)
	return func(i int) time.Time { return hours[i/per].Add(time.Duration(i%per) * step) }
}

// pastHours is count consecutive whole hours, the first starting ago before
// the current hour.
func pastHours(ago time.Duration, count int) []time.Time {
	first := time.Now().UTC().Truncate(time.Hour).Add(-ago)
	out := make([]time.Time, count)
	for i := range out {
		out[i] = first.Add(time.Duration(i) * time.Hour)
	}
	return out
}

// archiveHours archives source's events of hours as the Archive workflow
// does: each hour gets a partition of its own, then the ArchiveHour
// activity writes its file (internal/archive's Writer) to the first store,
// records and confirms it in the index's archives table and drops the
// hour's events from the index. The confirmed files are then copied to
// the other stores under the same names (each Put checked against the
// recorded digest), so that every store holds the same archive. It
// returns the bytes of the files.
func (e *refreshEnv) archiveHours(ctx context.Context, source string, hours []time.Time, stores []archivedStore) (int64, error) {
	if err := e.store.SplitPartitions(ctx, change.HourID(hours[0])); err != nil {
		return 0, err
	}
	acts := *e.acts
	acts.Remote = stores[0].store
	warmUp()
	var total int64
	for _, h := range hours {
		env := newActivityEnv()
		env.RegisterActivity(&acts)
		val, err := env.ExecuteActivity(acts.ArchiveHour, calls.ArchiveHourInput{Source: source, Hour: h})
		if err != nil {
			return 0, fmt.Errorf("archive %s hour %s: %w", source, h.Format(time.RFC3339), err)
		}
		var res calls.ArchiveHourResult
		if err := val.Get(&res); err != nil {
			return 0, err
		}
		if res.Kept != "" || res.Events == 0 {
			return 0, fmt.Errorf("archive %s hour %s: %d events, kept: %s", source, h.Format(time.RFC3339), res.Events, res.Kept)
		}
		total += res.Bytes
	}
	recs, err := e.store.Archives(ctx, source)
	if err != nil {
		return 0, err
	}
	if len(recs) != len(hours) {
		return 0, fmt.Errorf("%s has %d archive records, want %d", source, len(recs), len(hours))
	}
	for _, r := range recs {
		if !r.Confirmed() || r.DroppedAt.IsZero() {
			return 0, fmt.Errorf("archive %s of %s is not confirmed and dropped: %+v", r.Object, source, r)
		}
		for _, st := range stores[1:] {
			if err := copyObject(ctx, stores[0].store, st.store, r.Object, digest.Digest{SHA256: r.SHA256, Size: r.Size}); err != nil {
				return 0, err
			}
		}
	}
	return total, nil
}

// copyObject stores the object name of from in to, checked against d.
func copyObject(ctx context.Context, from, to storage.Store, name string, d digest.Digest) error {
	rc, err := from.Open(ctx, name)
	if err != nil {
		return err
	}
	defer rc.Close()
	if err := to.Put(ctx, name, rc, d); err != nil {
		return fmt.Errorf("copy %s from %s to %s: %w", name, from.Location(), to.Location(), err)
	}
	return nil
}

// historyFixture is the history benchmark's workload: hours of updates
// of tables equally busy tables app.t01, app.t02, ..., every table's rows
// 1, 8, 15, ... (ids 1 + 7i) updated once an hour, the tables' events
// taking turns.
type historyFixture struct {
	source        string
	hours         []time.Time
	tables, perHr int // events of each table in each hour: perHr / tables
}

func historyTable(i int) string { return fmt.Sprintf("t%02d", i+1) }

// insert commits the fixture's events into the index, in seq order, in
// transactions of 5,000 events, and returns how many.
func (f historyFixture) insert(ctx context.Context, e *refreshEnv) (int, error) {
	per := f.perHr / f.tables
	commit := hourCommit(f.hours, per*f.tables*len(f.hours))
	evs := make([]change.Event, 0, 5000)
	seq := uint64(0)
	for h := range f.hours {
		for i := range per {
			id := 1 + 7*i
			for t := range f.tables {
				ev, err := e.updateEvent(seq+1, commit(int(seq)), historyTable(t), id, h, h+1)
				if err != nil {
					return 0, err
				}
				seq++
				if evs = append(evs, ev); len(evs) == cap(evs) {
					if err := e.commitEvents(ctx, f.source, evs); err != nil {
						return 0, err
					}
					evs = evs[:0]
				}
			}
		}
	}
	return int(seq), e.commitEvents(ctx, f.source, evs)
}
