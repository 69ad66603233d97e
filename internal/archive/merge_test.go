package archive

import (
	"bytes"
	"cmp"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
)

func scanOf(evs []change.Event) Scan {
	return func(fn func(change.Event) error) error {
		for _, e := range evs {
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestSeqOrder: a file's events come back in seq order, all of them, from
// one Reader per table.
func TestSeqOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	evs := randomEvents(rng, 3000, 6)
	b, _ := writeFile(t, evs, WriterOptions{RowGroupRows: 100})
	opened := 0
	var got []change.Event
	err := SeqOrder(func() (*Reader, error) {
		opened++
		return NewReader(bytes.NewReader(b), int64(len(b)), "test.parquet")
	}, func(e change.Event) error {
		got = append(got, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(evs)
	slices.SortFunc(want, func(a, b change.Event) int { return cmp.Compare(a.Seq, b.Seq) })
	if d := sameEvents(got, want); d != "" {
		t.Fatal(d)
	}
	if opened != 6 {
		t.Fatalf("%d readers opened for 6 tables", opened)
	}
	stop := errors.New("stop")
	if err := SeqOrder(func() (*Reader, error) { return NewReader(bytes.NewReader(b), int64(len(b)), "x") },
		func(change.Event) error { return stop }); err != stop {
		t.Fatalf("callback error: %v", err)
	}
}

// TestMergeFileOrder: the union of an archived hour and the index's events
// of it, each event once; a disagreement about one event is refused.
func TestMergeFileOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	all := randomEvents(rng, 2000, 5)
	var stored, index_ []change.Event
	for i, e := range all {
		switch i % 3 {
		case 0:
			stored = append(stored, e)
		case 1:
			index_ = append(index_, e)
		default: // in both
			stored = append(stored, e)
			index_ = append(index_, e)
		}
	}
	var got []change.Event
	if err := MergeFileOrder(scanOf(stored), scanOf(index_), func(e change.Event) error {
		got = append(got, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if d := sameEvents(got, all); d != "" {
		t.Fatal(d)
	}
	changed := slices.Clone(index_)
	changed[1].After = []byte(`{"other":1}`) // all[2], in both streams
	var ce *ConflictError
	err := MergeFileOrder(scanOf(stored), scanOf(changed), func(change.Event) error { return nil })
	if !errors.As(err, &ce) || ce.Field != "after image" {
		t.Fatalf("conflicting event: %v", err)
	}
	failing := errors.New("read failed")
	err = MergeFileOrder(scanOf(stored), func(fn func(change.Event) error) error {
		fn(index_[0])
		return failing
	}, func(change.Event) error { return nil })
	if !errors.Is(err, failing) {
		t.Fatalf("stream error: %v", err)
	}
}

// TestHistoryRoundTrip: a history file reads back as written, the same
// history gives the same bytes, and another source's file is refused.
func TestHistoryRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 29, 8, 0, 0, 123456000, time.UTC)
	h := History{Source: "main",
		Schemas: []change.SchemaVersion{{Source: "main", Schema: "shop", Table: "orders", Version: 1, Seq: 0, BinlogFile: "b.000001", BinlogPos: 4,
			DDL: "-- read", Definition: &schema.Table{Schema: "shop", Name: "orders", Key: []string{"id"}, KeyKind: schema.KeyPrimary,
				Columns: []schema.Column{{Name: "id", Type: "int"}}}, CreatedAt: at},
			{Source: "main", Schema: "shop", Table: "orders", Version: 2, Seq: 10, BinlogFile: "b.000001", BinlogPos: 900, DDL: "DROP TABLE orders", CreatedAt: at}},
		Gaps:   []change.Gap{{Source: "main", FromFile: "b.000001", FromPos: 900, FromGTID: "0-1-5", ToFile: "b.000003", ToPos: 4, Reason: "purged", DetectedAt: at}},
		Starts: []change.Start{{Source: "main", Seq: 0, Position: binlogpos.Position{File: "b.000001", Pos: 4}, Reason: "first start", StartedAt: at}},
	}
	b, err := MarshalHistory(h)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := MarshalHistory(h)
	if !bytes.Equal(b, b2) {
		t.Fatal("the same history gave other bytes")
	}
	got, err := ParseHistory(b, "main", "history.json")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, h) {
		t.Fatalf("history read back\n got %+v\nwant %+v", got, h)
	}
	var ce *CorruptError
	if _, err := ParseHistory(b, "other", "history.json"); !errors.As(err, &ce) {
		t.Fatalf("another source's history: %v", err)
	}
	if _, err := ParseHistory(b[:len(b)/2], "main", "history.json"); !errors.As(err, &ce) {
		t.Fatalf("truncated history: %v", err)
	}
}

func TestObjectNames(t *testing.T) {
	name := ObjectName("main", testHour)
	if name != "main/archives/2026-11-29/08.parquet" {
		t.Fatalf("object name %q", name)
	}
	if h, ok := ParseObjectName("main", name); !ok || !h.Equal(testHour) {
		t.Fatalf("parse %q: %v %v", name, h, ok)
	}
	for _, bad := range []string{"other/archives/2026-11-29/08.parquet", "main/archives/2026-11-29/8.parquet",
		"main/archives/2026-11-29/08.parquet.tmp", "main/history.json", "main/archives/2026-11-29/24.parquet"} {
		if _, ok := ParseObjectName("main", bad); ok {
			t.Fatalf("%q parsed as an archive name", bad)
		}
	}
}
