package moment

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/change"
)

// listEvents is an Events over a slice (seq order).
type listEvents []change.Event

func (l listEvents) TableEvents(_ context.Context, _, s, t string, after, upto uint64, fn func(change.Event) error) error {
	for _, e := range l {
		if e.Schema == s && e.Table == t && e.Seq > after && e.Seq <= upto {
			if err := fn(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l listEvents) KeyEvents(_ context.Context, _, s, t, key string, fn func(change.Event) error) error {
	for _, e := range l {
		if e.Schema == s && e.Table == t && (e.PK == key || e.PKBefore == key) {
			if err := fn(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func evs(seqs ...uint64) listEvents {
	var out listEvents
	for _, s := range seqs {
		out = append(out, change.Event{Seq: s, Schema: "a", Table: "t", PK: fmt.Sprintf("[%d]", s%3)})
	}
	return out
}

// memArchive is an ArchiveStore of hours held in memory; it records which
// hours are open at once.
type memArchive struct {
	hours   []ArchiveHour
	events  map[uint32]listEvents
	open    int
	maxOpen int
	missing uint32
}

func (m *memArchive) Hours(_ context.Context, _ string, after, upto uint64) ([]ArchiveHour, error) {
	var out []ArchiveHour
	for _, h := range m.hours {
		if h.LastSeq > after && (upto == 0 || h.FirstSeq <= upto) {
			out = append(out, h)
		}
	}
	return out, nil
}

func (m *memArchive) Open(_ context.Context, h ArchiveHour) (HourFile, error) {
	if h.Hour == m.missing {
		return nil, errors.New("no such file")
	}
	m.open++
	m.maxOpen = max(m.maxOpen, m.open)
	return &memHour{m: m, evs: m.events[h.Hour]}, nil
}

type memHour struct {
	m   *memArchive
	evs listEvents
}

func (h *memHour) TableEvents(s, t string, fn func(change.Event) error) error {
	return h.evs.TableEvents(context.Background(), "", s, t, 0, 1<<62, fn)
}

func (h *memHour) Close() error { h.m.open--; return nil }

func seqsOf(t *testing.T, e Events, after, upto uint64) []uint64 {
	t.Helper()
	var got []uint64
	if err := e.TableEvents(context.Background(), "main", "a", "t", after, upto, func(ev change.Event) error {
		got = append(got, ev.Seq)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestMergeEvents(t *testing.T) {
	// The index still holds hour 3 (seqs 20..29) that is also archived;
	// hours 1..3 are archived, hour 2's and 3's seqs interleave at their
	// edge (the source's clock went back).
	arch := &memArchive{
		hours: []ArchiveHour{
			{Hour: 3, Name: "h3", FirstSeq: 19, LastSeq: 29},
			{Hour: 1, Name: "h1", FirstSeq: 1, LastSeq: 9},
			{Hour: 2, Name: "h2", FirstSeq: 10, LastSeq: 20},
		},
		events: map[uint32]listEvents{1: evs(1, 2, 3, 5, 8, 9), 2: evs(10, 11, 15, 18, 20), 3: evs(19, 21, 25, 29)},
	}
	ix := evs(21, 25, 29, 30, 31, 40)
	m := Merge(ix, ArchiveEvents{Store: arch})
	want := []uint64{1, 2, 3, 5, 8, 9, 10, 11, 15, 18, 19, 20, 21, 25, 29, 30, 31, 40}
	if got := seqsOf(t, m, 0, 100); !slices.Equal(got, want) {
		t.Fatalf("merged %v, want %v", got, want)
	}
	if arch.maxOpen > 2 {
		t.Fatalf("%d hours open at once: hours must open as the merge reaches them", arch.maxOpen)
	}
	if arch.open != 0 {
		t.Fatalf("%d hours left open", arch.open)
	}
	if got := seqsOf(t, m, 9, 21); !slices.Equal(got, []uint64{10, 11, 15, 18, 19, 20, 21}) {
		t.Fatalf("window (9, 21]: %v", got)
	}
	// Key events merge too.
	var keys []uint64
	if err := m.KeyEvents(context.Background(), "main", "a", "t", "[1]", func(e change.Event) error {
		keys = append(keys, e.Seq)
		return nil
	}); err != nil || !slices.Equal(keys, []uint64{1, 10, 19, 25, 31, 40}) {
		t.Fatalf("key events %v %v", keys, err)
	}
	// A callback's error stops the merge and comes back as is; nothing
	// stays open.
	stop := errors.New("enough")
	n := 0
	err := m.TableEvents(context.Background(), "main", "a", "t", 0, 100, func(change.Event) error {
		if n++; n == 4 {
			return stop
		}
		return nil
	})
	if err != stop || arch.open != 0 {
		t.Fatalf("stop: %v, %d open", err, arch.open)
	}
	// A missing archive file is an error naming it.
	arch.missing = 2
	err = m.TableEvents(context.Background(), "main", "a", "t", 0, 100, func(change.Event) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "archive h2") {
		t.Fatalf("missing hour: %v", err)
	}
}
