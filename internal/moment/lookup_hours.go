package moment

import (
	"cmp"
	"context"
	"errors"
	"io"
	"slices"

	"github.com/dbtrail/dbtrail/internal/archive"
	"github.com/dbtrail/dbtrail/internal/change"
)

// hourSearch reads archived hours for one lookup, each hour's file opened
// once (its footer read and checked) and only the row groups a search
// needs read (each checked against its digest).
type hourSearch struct {
	ctx   context.Context
	files ArchiveFiles
	open  map[string]*openHour
}

// openHour is an opened hour file and its row groups.
type openHour struct {
	h      ArchiveHour
	r      *archive.Reader
	c      io.Closer
	groups []archive.Group
}

// unit is one row group of an opened hour.
type unit struct {
	oh *openHour
	i  int
}

func (u unit) group() archive.Group { return u.oh.groups[u.i] }

func newHourSearch(ctx context.Context, files ArchiveFiles) *hourSearch {
	return &hourSearch{ctx: ctx, files: files, open: map[string]*openHour{}}
}

func (s *hourSearch) close() {
	for _, oh := range s.open {
		oh.c.Close()
	}
}

// hour opens h, once; an error is a *HourError.
func (s *hourSearch) hour(h ArchiveHour) (*openHour, error) {
	if oh, ok := s.open[h.Name]; ok {
		return oh, nil
	}
	r, c, err := s.files.openReader(s.ctx, h)
	if err != nil {
		return nil, &HourError{Hour: h, Err: err}
	}
	oh := &openHour{h: h, r: r, c: c, groups: r.Groups()}
	s.open[h.Name] = oh
	return oh, nil
}

// scan passes the events of u in seq order to fn until fn returns false.
// An error reading the group is a *HourError; fn's error is returned as is.
func (s *hourSearch) scan(u unit, fn func(*change.Event) (bool, error)) error {
	var fnErr error
	err := u.oh.r.GroupEvents(u.i, func(e change.Event) error {
		more, err := fn(&e)
		if err != nil {
			fnErr = err
			return err
		}
		if !more {
			return errFound
		}
		return nil
	})
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil && !errors.Is(err, errFound):
		return &HourError{Hour: u.oh.h, Err: err}
	}
	return nil
}

// first is the first event of u.
func (s *hourSearch) first(u unit) (change.Event, error) {
	var out change.Event
	err := s.scan(u, func(e *change.Event) (bool, error) { out = *e; return false, nil })
	return out, err
}

// firstUnit is the row group holding the hour's first event.
func (oh *openHour) firstUnit() unit {
	best := 0
	for i, g := range oh.groups {
		if g.FirstSeq < oh.groups[best].FirstSeq {
			best = i
		}
	}
	return unit{oh: oh, i: best}
}

// lastTrue returns the greatest i < n for which pred holds, pred holding
// for a prefix of [0, n); -1 when it holds for none.
func lastTrue(n int, pred func(i int) (bool, error)) (int, error) {
	lo, hi := 0, n // pred holds below lo, fails from hi on
	for lo < hi {
		mid := lo + (hi-lo)/2
		yes, err := pred(mid)
		if err != nil {
			return -1, err
		}
		if yes {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo - 1, nil
}

// lastWhere returns the event with the greatest seq in (floor, upto] of
// hours for which le holds, le holding for a prefix of the stream in seq
// order. It binary-searches the hours by their first event, then the row
// groups of the last hour whose first event holds (and of the hours whose
// seqs overlap it: late events) by their first event, then reads the last
// such row group and those overlapping it.
func (s *hourSearch) lastWhere(hours []ArchiveHour, floor, upto uint64, le func(*change.Event) (bool, error)) (change.Event, bool, error) {
	hours = slices.Clone(hours)
	slices.SortFunc(hours, func(a, b ArchiveHour) int { return cmp.Compare(a.FirstSeq, b.FirstSeq) })
	k, err := lastTrue(len(hours), func(i int) (bool, error) {
		oh, err := s.hour(hours[i])
		if err != nil {
			return false, err
		}
		e, err := s.first(oh.firstUnit())
		if err != nil {
			return false, err
		}
		return le(&e)
	})
	if err != nil || k < 0 {
		return change.Event{}, false, err
	}
	var units []unit
	for i := 0; i <= k; i++ {
		if i != k && hours[i].LastSeq < hours[k].FirstSeq {
			continue
		}
		oh, err := s.hour(hours[i])
		if err != nil {
			return change.Event{}, false, err
		}
		for gi, g := range oh.groups {
			if g.LastSeq > floor && g.FirstSeq <= upto {
				units = append(units, unit{oh: oh, i: gi})
			}
		}
	}
	slices.SortFunc(units, func(a, b unit) int { return cmp.Compare(a.group().FirstSeq, b.group().FirstSeq) })
	k, err = lastTrue(len(units), func(i int) (bool, error) {
		e, err := s.first(units[i])
		if err != nil {
			return false, err
		}
		return le(&e)
	})
	if err != nil || k < 0 {
		return change.Event{}, false, err
	}
	var best change.Event
	found := false
	for i := 0; i <= k; i++ {
		if i != k && units[i].group().LastSeq < units[k].group().FirstSeq {
			continue
		}
		err := s.scan(units[i], func(e *change.Event) (bool, error) {
			if e.Seq <= floor {
				return true, nil
			}
			if e.Seq > upto {
				return false, nil
			}
			yes, err := le(e)
			if err != nil || !yes {
				return false, err
			}
			if !found || e.Seq > best.Seq {
				best, found = *e, true
			}
			return true, nil
		})
		if err != nil {
			return change.Event{}, false, err
		}
	}
	return best, found, nil
}

// eventAt returns the event with seq among hours: only the row groups
// whose seq range holds it are read.
func (s *hourSearch) eventAt(hours []ArchiveHour, seq uint64) (change.Event, bool, error) {
	for _, h := range hours {
		if seq < h.FirstSeq || seq > h.LastSeq {
			continue
		}
		oh, err := s.hour(h)
		if err != nil {
			return change.Event{}, false, err
		}
		for gi, g := range oh.groups {
			if seq < g.FirstSeq || seq > g.LastSeq {
				continue
			}
			var out change.Event
			found := false
			err := s.scan(unit{oh: oh, i: gi}, func(e *change.Event) (bool, error) {
				if e.Seq == seq {
					out, found = *e, true
				}
				return e.Seq < seq, nil
			})
			if err != nil || found {
				return out, found, err
			}
		}
	}
	return change.Event{}, false, nil
}

// gtidEvent returns an event of the transaction with GTID gtid among the
// hours' events in (floor, upto], reading the hours newest first. A GTID
// carries no order the files keep statistics of, so every row group of an
// hour is read until one holds it.
func (s *hourSearch) gtidEvent(hours []ArchiveHour, gtid string, floor, upto uint64) (change.Event, bool, error) {
	hours = slices.Clone(hours)
	slices.SortFunc(hours, func(a, b ArchiveHour) int { return cmp.Compare(b.LastSeq, a.LastSeq) })
	for _, h := range hours {
		oh, err := s.hour(h)
		if err != nil {
			return change.Event{}, false, err
		}
		for gi, g := range oh.groups {
			if g.LastSeq <= floor || g.FirstSeq > upto {
				continue
			}
			var out change.Event
			found := false
			err := s.scan(unit{oh: oh, i: gi}, func(e *change.Event) (bool, error) {
				if e.GTID == gtid && e.Seq > floor && e.Seq <= upto {
					out, found = *e, true
					return false, nil
				}
				return true, nil
			})
			if err != nil || found {
				return out, found, err
			}
		}
	}
	return change.Event{}, false, nil
}

// countTables adds the events of hour h in (after, upto] to counts, by
// table: a row group wholly inside the range counts its rows, one
// straddling an end is read.
func (s *hourSearch) countTables(h ArchiveHour, after, upto uint64, counts map[TableKey]int64) error {
	oh, err := s.hour(h)
	if err != nil {
		return err
	}
	for gi, g := range oh.groups {
		k := TableKey{Schema: g.Schema, Table: g.Table}
		switch {
		case g.LastSeq <= after || g.FirstSeq > upto:
		case g.FirstSeq > after && g.LastSeq <= upto:
			counts[k] += g.Rows
		default:
			err := s.scan(unit{oh: oh, i: gi}, func(e *change.Event) (bool, error) {
				if e.Seq > after && e.Seq <= upto {
					counts[k]++
				}
				return e.Seq <= upto, nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}
