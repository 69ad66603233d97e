package index

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
)

// randomEvents is a stream a capturer could write: runs of tables, schema
// versions, hours, binlog files, transactions with and without GTIDs, and
// streamed transactions whose end position is still 0.
func randomEvents(r *rand.Rand, n int) []change.Event {
	t := time.Date(2026, 11, 29, 10, 59, 59, 0, time.UTC)
	file, end, gtid := "bin.000001", uint64(4), "0-1-1"
	var evs []change.Event
	for seq := uint64(1); len(evs) < n; seq++ {
		if r.IntN(4) == 0 { // next transaction
			t = t.Add(time.Duration(r.IntN(3)) * 700 * time.Millisecond)
			end += uint64(100 + r.IntN(1000))
			gtid = fmt.Sprintf("0-1-%d", seq)
			if r.IntN(10) == 0 {
				gtid = ""
			}
			if r.IntN(20) == 0 {
				file, end = "bin.000002", 4
			}
		}
		e := change.Event{Seq: seq, CommitTime: t, BinlogFile: file, EndPos: end, GTID: gtid,
			Schema: "db", Table: []string{"a", "b", `c"x`}[r.IntN(3)/2], SchemaVersion: uint32(1 + r.IntN(8)/7),
			Op: []change.Op{change.OpInsert, change.OpUpdate, change.OpDelete}[r.IntN(3)], PK: fmt.Sprintf(`[%d,"k\"%d"]`, r.IntN(50), seq)}
		if r.IntN(15) == 0 {
			e.EndPos = 0
		}
		img := fmt.Sprintf(`{"id":%d,"s":"%s","n":null,"j":"{\"a\":[1,2]}","e":"\\\"}]"}`, seq, strings.Repeat("é", r.IntN(40)))
		if r.IntN(200) == 0 {
			img = `{"big":"` + strings.Repeat("z", chunkMaxBytes) + `"}`
		}
		if e.Op != change.OpInsert {
			e.Before = []byte(img)
		}
		if e.Op != change.OpDelete {
			e.After = []byte(img)
		}
		if e.Op == change.OpUpdate && r.IntN(5) == 0 {
			e.PKBefore = `[0,"old"]`
		}
		evs = append(evs, e)
	}
	return evs
}

// headOf is the stored header of c, as a reader gets it back.
func headOf(c *chunk) *chunkHead {
	return &chunkHead{FirstSeq: c.firstSeq, CommitTime: c.head.CommitTime, BinlogFile: c.head.BinlogFile,
		EndPos: c.head.EndPos, GTID: c.head.GTID, Schema: c.head.Schema, Table: c.head.Table, Version: c.head.SchemaVersion,
		Columns: c.columns}
}

// TestChunksRoundTrip packs random streams and checks every invariant the
// readers rely on (chunk.go), then that unpacking gives every event back.
func TestChunksRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var buf []byte
	for round := 0; round < 20; round++ {
		evs := randomEvents(r, 1+r.IntN(3000))
		if round%4 == 3 { // a hole, as reindex packs
			evs = append(evs[:len(evs)/2:len(evs)/2], evs[len(evs)/2+1:]...)
		}
		var chunks []chunk
		var err error
		if chunks, buf, err = packChunks(buf, evs); err != nil {
			t.Fatal(err)
		}
		bySeq := map[uint64]change.Event{}
		for _, e := range evs {
			bySeq[e.Seq] = e
		}
		got := map[uint64]change.Event{}
		lastOfTable := map[[2]string]uint64{}
		for ci := range chunks {
			c := &chunks[ci]
			if ci > 0 && c.firstSeq <= chunks[ci-1].firstSeq {
				t.Fatalf("round %d chunk %d: first seqs out of order", round, ci)
			}
			if c.n < 1 || c.n > chunkMaxEvents || (c.n > 1 && len(c.payload) > chunkMaxBytes) || c.lastSeq-c.firstSeq >= chunkMaxSpan {
				t.Fatalf("chunk %d over its bounds: %d events, %d bytes, span %d", ci, c.n, len(c.payload), c.lastSeq-c.firstSeq)
			}
			tk := [2]string{c.head.Schema, c.head.Table}
			if last, ok := lastOfTable[tk]; ok && c.firstSeq <= last {
				t.Fatalf("round %d chunk %d overlaps the previous chunk of %v", round, ci, tk)
			}
			lastOfTable[tk] = c.lastSeq
			var prev uint64
			n := 0
			if err := unpackChunk(headOf(c), c.payload, func(e *change.Event) error {
				if n > 0 && e.Seq <= prev {
					return fmt.Errorf("seq %d after %d", e.Seq, prev)
				}
				want := bySeq[e.Seq]
				if !sameChunkKey(c.head, &want) || (want.EndPos == 0) != (c.head.EndPos == 0) {
					return fmt.Errorf("seq %d does not belong with the chunk's first event", e.Seq)
				}
				if _, dup := got[e.Seq]; dup {
					return fmt.Errorf("seq %d unpacked twice", e.Seq)
				}
				got[e.Seq] = *e
				prev = e.Seq
				n++
				return nil
			}); err != nil {
				t.Fatalf("round %d chunk %d: %v\n%.300s", round, ci, err, c.payload)
			}
			if n != c.n || prev != c.lastSeq {
				t.Fatalf("round %d chunk %d: %d events up to %d, header says %d up to %d", round, ci, n, prev, c.n, c.lastSeq)
			}
		}
		// One table's chunks hold every event of it between their ends.
		for _, e := range evs {
			for ci := range chunks {
				c := &chunks[ci]
				if c.head.Schema == e.Schema && c.head.Table == e.Table && e.Seq > c.firstSeq && e.Seq < c.lastSeq {
					if _, ok := got[e.Seq]; !ok || got[e.Seq].Seq != e.Seq {
						t.Fatalf("seq %d lies inside chunk %d of its table", e.Seq, ci)
					}
				}
			}
		}
		if len(got) != len(evs) {
			t.Fatalf("round %d: %d events unpacked, of %d", round, len(got), len(evs))
		}
		for _, e := range evs {
			if !reflect.DeepEqual(got[e.Seq], e) {
				t.Fatalf("round %d event %d:\n got %+v\nwant %+v", round, e.Seq, got[e.Seq], e)
			}
		}
	}
}

// sameChunkKey reports whether e may share a chunk with head.
func sameChunkKey(head, e *change.Event) bool {
	return e.Table == head.Table && e.Schema == head.Schema && e.SchemaVersion == head.SchemaVersion &&
		e.BinlogFile == head.BinlogFile && change.HourID(e.CommitTime) == change.HourID(head.CommitTime)
}

func TestChunkBreaks(t *testing.T) {
	base := testEvent(1, change.OpInsert, `{"id":1}`)
	for name, mutate := range map[string]func(e *change.Event){
		"version":     func(e *change.Event) { e.SchemaVersion = 2 },
		"hour":        func(e *change.Event) { e.CommitTime = e.CommitTime.Add(time.Hour) },
		"binlog file": func(e *change.Event) { e.BinlogFile = "bin.000002" },
		"unknown end": func(e *change.Event) { e.EndPos = 0 },
		"columns":     func(e *change.Event) { e.After = []byte(`{"id":1,"x":2}`) },
		"hole":        func(e *change.Event) { e.Seq = 3 },
	} {
		e2 := base
		e2.Seq = 2
		mutate(&e2)
		if cs, _, err := packChunks(nil, []change.Event{base, e2}); err != nil || len(cs) != 2 {
			t.Errorf("%s change: %d chunks, want 2 (%v)", name, len(cs), err)
		}
	}
	// Another table's events between do not end a table's chunk.
	a, b, c := base, base, base
	b.Seq, b.Table = 2, "u"
	c.Seq = 3
	if cs, _, _ := packChunks(nil, []change.Event{a, b, c}); len(cs) != 2 || cs[0].n != 2 || cs[0].lastSeq != 3 || cs[1].firstSeq != 2 {
		t.Errorf("interleaved tables: %d chunks", len(cs))
	}
	// A table whose next event has another key closes its chunk, so its
	// chunks never overlap even when the hour goes back and forth.
	hours := make([]change.Event, 6)
	for i := range hours {
		hours[i] = base
		hours[i].Seq = uint64(i + 1)
		hours[i].CommitTime = base.CommitTime.Add(time.Duration(i%2) * time.Hour)
	}
	if cs, _, _ := packChunks(nil, hours); len(cs) != 6 {
		t.Errorf("hour back and forth: %d chunks, want 6", len(cs))
	}
	evs := make([]change.Event, chunkMaxEvents+1)
	for i := range evs {
		evs[i] = testEvent(uint64(i+1), change.OpInsert, "{}")
		evs[i].EndPos = 7
	}
	if cs, _, _ := packChunks(nil, evs); len(cs) != 2 || cs[0].n != chunkMaxEvents {
		t.Errorf("event bound: %d chunks", len(cs))
	}
	var span []change.Event
	for _, seq := range []uint64{1, chunkMaxSpan, chunkMaxSpan + 1} {
		e := testEvent(seq, change.OpInsert, "{}")
		if seq > 1 {
			e.Table = "other"
		}
		span = append(span, e)
	}
	span[2].Table = "t"
	// seqs 1 and chunkMaxSpan+1 of t are chunkMaxSpan apart: two chunks of t.
	for i := range span {
		span[i].Seq = uint64(i + 1)
	}
	span[2].Seq = chunkMaxSpan + 1
	span[1].Seq = 2
	filler := make([]change.Event, 0, chunkMaxSpan)
	filler = append(filler, span[0])
	for seq := uint64(2); seq <= chunkMaxSpan; seq++ {
		e := testEvent(seq, change.OpInsert, "{}")
		e.Table = "other"
		filler = append(filler, e)
	}
	filler = append(filler, span[2])
	cs, _, _ := packChunks(nil, filler)
	nT := 0
	for _, c := range cs {
		if c.head.Table == "t" {
			nT++
		}
	}
	if nT != 2 {
		t.Errorf("span bound: %d chunks of t, want 2", nT)
	}
}

// TestChunkPayloadForm pins the stored text: the events view's JSON_TABLE
// paths depend on it.
func TestChunkPayloadForm(t *testing.T) {
	a := testEvent(7, change.OpInsert, `{"id":1,"n\"m":"x"}`)
	b := testEvent(8, change.OpUpdate, `{"id":2,"n\"m":null}`)
	b.PKBefore, b.GTID, b.CommitTime = `[9]`, "", a.CommitTime.Add(time.Second)
	cs, _, err := packChunks(nil, []change.Event{a, b})
	want := `[{"s":7,"o":"i","k":[1],"a":[1,"x"]},` +
		`{"s":8,"t":1000000,"g":"","e":108,"o":"u","k":[1],"kb":[9],"b":[2,null],"a":[2,{}]}]`
	if err != nil || len(cs) != 1 || string(cs[0].payload) != want || string(cs[0].columns) != `["id","n\"m"]` {
		t.Fatalf("payload\n%s %s\nwant\n%s (%v)", cs[0].payload, cs[0].columns, want, err)
	}
	// The older form, without column names, still reads.
	old := `[{"s":7,"o":"i","k":[1],"a":{"id":1}},{"s":8,"t":"2026-01-02 03:04:06.000006","o":"d","k":[1],"b":{"id":1}}]`
	var got []change.Event
	h := &chunkHead{FirstSeq: 7, CommitTime: a.CommitTime, Schema: "db", Table: "t"}
	if err := unpackChunk(h, []byte(old), func(e *change.Event) error { got = append(got, *e); return nil }); err != nil ||
		len(got) != 2 || string(got[1].Before) != `{"id":1}` || !got[1].CommitTime.Equal(a.CommitTime.Add(time.Second)) {
		t.Fatalf("older form: %+v %v", got, err)
	}
}

func TestPackImagesOfOtherColumns(t *testing.T) {
	e := testEvent(1, change.OpUpdate, `{"id":1}`)
	e.After = []byte(`{"ID":1,"x":"}"}`)
	cs, _, err := packChunks(nil, []change.Event{e})
	if err != nil || len(cs) != 1 || string(cs[0].payload) != `[{"s":1,"o":"u","k":[1],"b":{"id":1},"a":[1,"}"]}]` {
		t.Fatalf("before and after with other names: %v %s", err, cs[0].payload)
	}
	var got []change.Event
	if err := unpackChunk(headOf(&cs[0]), cs[0].payload, func(e *change.Event) error { got = append(got, *e); return nil }); err != nil ||
		string(got[0].Before) != `{"id":1}` || string(got[0].After) != string(e.After) {
		t.Fatalf("unpacked %+v %v", got, err)
	}
	h := &chunkHead{FirstSeq: 1, Schema: "db", Table: "t", Columns: []byte(`["id"]`)}
	for _, p := range []string{`[{"s":1,"o":"i","k":[1],"a":[1,2]}]`, `[{"s":1,"o":"i","k":[1],"a":[]}]`, `[{"s":1,"o":"i","k":[1],"a":"x"}]`} {
		if err := unpackChunk(h, []byte(p), func(*change.Event) error { return nil }); err == nil {
			t.Errorf("payload %s with columns [id] accepted", p)
		}
	}
}

func TestUnpackChunkRejects(t *testing.T) {
	h := &chunkHead{FirstSeq: 5, Schema: "db", Table: "t"}
	for _, p := range []string{
		``, `[`, `[]x`, `{"s":1}`, `[{"s":1,"o":"i"}]`, `[{"s":1,"o":"x","k":[1]}]`, `[{"s":"1","o":"i","k":[1]}]`,
		`[{"s":1,"o":"i","k":[1],"a":{"x":"}]`, `[{"s":1,"o":"i","k":[1],"z":1}]`, `[{"s":1,"o":"i","k":[1]} ]`,
		`[{"s":1,"o":"i","k":[1]},]`, `[{"s":1,"o":"i","k":[1],"a":}]`,
	} {
		err := unpackChunk(h, []byte(p), func(*change.Event) error { return nil })
		if err == nil {
			t.Errorf("payload %q accepted", p)
		} else if !strings.Contains(err.Error(), "db.t at seq 5") {
			t.Errorf("payload %q: error %q does not name the chunk", p, err)
		}
	}
	var n int
	if err := unpackChunk(h, []byte(`[]`), func(*change.Event) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("empty chunk: %d %v", n, err)
	}
}

func BenchmarkPackChunks(b *testing.B) {
	evs := randomEvents(rand.New(rand.NewPCG(3, 4)), 5000)
	var buf []byte
	for b.Loop() {
		_, buf, _ = packChunks(buf, evs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
}
