package index

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// randomEvents is a stream a capturer could write: runs of tables, schema
// versions, hours, binlog files, transactions with and without GTIDs, and
// streamed transactions whose end position is still 0.
func randomEvents(r *rand.Rand, n int) []Event {
	t := time.Date(2026, 11, 29, 10, 59, 59, 0, time.UTC)
	file, end, gtid := "bin.000001", uint64(4), "0-1-1"
	var evs []Event
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
		e := Event{Seq: seq, CommitTime: t, BinlogFile: file, EndPos: end, GTID: gtid,
			Schema: "db", Table: []string{"a", "b", `c"x`}[r.IntN(3)/2], SchemaVersion: uint32(1 + r.IntN(8)/7),
			Op: []Op{OpInsert, OpUpdate, OpDelete}[r.IntN(3)], PK: fmt.Sprintf(`[%d,"k\"%d"]`, r.IntN(50), seq)}
		if r.IntN(15) == 0 {
			e.EndPos = 0
		}
		img := fmt.Sprintf(`{"id":%d,"s":"%s","n":null,"j":"{\"a\":[1,2]}","e":"\\\"}]"}`, seq, strings.Repeat("é", r.IntN(40)))
		if r.IntN(200) == 0 {
			img = `{"big":"` + strings.Repeat("z", chunkMaxBytes) + `"}`
		}
		if e.Op != OpInsert {
			e.Before = []byte(img)
		}
		if e.Op != OpDelete {
			e.After = []byte(img)
		}
		if e.Op == OpUpdate && r.IntN(5) == 0 {
			e.PKBefore = `[0,"old"]`
		}
		evs = append(evs, e)
	}
	return evs
}

func TestChunksRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var buf []byte
	for round := 0; round < 20; round++ {
		evs := randomEvents(r, 1+r.IntN(3000))
		var chunks []chunk
		chunks, buf = packChunks(buf, evs)
		var got []Event
		next := 0
		for ci, c := range chunks {
			if c.firstSeq != evs[next].Seq || c.n < 1 || c.lastSeq != evs[next+c.n-1].Seq || c.head != &evs[next] {
				t.Fatalf("round %d chunk %d: first %d last %d n %d at event %d", round, ci, c.firstSeq, c.lastSeq, c.n, next)
			}
			if c.n > chunkMaxEvents || (c.n > 1 && len(c.payload) > chunkMaxBytes) {
				t.Fatalf("chunk %d over its bounds: %d events, %d bytes", ci, c.n, len(c.payload))
			}
			for _, e := range evs[next : next+c.n] {
				if !sameRun(c.head, &e) {
					t.Fatalf("chunk %d mixes runs: seq %d", ci, e.Seq)
				}
			}
			h := &chunkHead{FirstSeq: c.firstSeq, CommitTime: c.head.CommitTime, BinlogFile: c.head.BinlogFile,
				EndPos: c.head.EndPos, GTID: c.head.GTID, Schema: c.head.Schema, Table: c.head.Table, Version: c.head.SchemaVersion}
			if err := unpackChunk(h, c.payload, func(e *Event) error {
				got = append(got, *e)
				return nil
			}); err != nil {
				t.Fatalf("round %d chunk %d: %v\n%.300s", round, ci, err, c.payload)
			}
			next += c.n
		}
		if next != len(evs) || len(got) != len(evs) {
			t.Fatalf("round %d: %d events packed, %d unpacked, of %d", round, next, len(got), len(evs))
		}
		for i := range evs {
			if !reflect.DeepEqual(got[i], evs[i]) {
				t.Fatalf("round %d event %d:\n got %+v\nwant %+v", round, i, got[i], evs[i])
			}
		}
	}
}

func TestChunkBreaks(t *testing.T) {
	base := testEvent(1, OpInsert, "{}")
	for name, change := range map[string]func(e *Event){
		"table":       func(e *Event) { e.Table = "u" },
		"version":     func(e *Event) { e.SchemaVersion = 2 },
		"hour":        func(e *Event) { e.CommitTime = e.CommitTime.Add(time.Hour) },
		"binlog file": func(e *Event) { e.BinlogFile = "bin.000002" },
		"unknown end": func(e *Event) { e.EndPos = 0 },
	} {
		e2 := base
		e2.Seq = 2
		change(&e2)
		if cs, _ := packChunks(nil, []Event{base, e2}); len(cs) != 2 {
			t.Errorf("%s change: %d chunks, want 2", name, len(cs))
		}
	}
	// An unknown end position may be followed by a known one (the header
	// stays 0, the event carries its own), not the other way round.
	a, b := base, base
	a.EndPos, b.Seq = 0, 2
	if cs, _ := packChunks(nil, []Event{a, b}); len(cs) != 1 || !strings.Contains(string(cs[0].payload), `"e":101`) {
		t.Errorf("known after unknown: %d chunks %s", len(cs), cs[0].payload)
	}
	evs := make([]Event, chunkMaxEvents+1)
	for i := range evs {
		evs[i] = testEvent(uint64(i+1), OpInsert, "{}")
		evs[i].EndPos = 7
	}
	if cs, _ := packChunks(nil, evs); len(cs) != 2 || cs[0].n != chunkMaxEvents {
		t.Errorf("event bound: %d chunks", len(cs))
	}
}

// TestChunkPayloadForm pins the stored text: the events view's JSON_TABLE
// paths and the migration's CONCAT depend on it.
func TestChunkPayloadForm(t *testing.T) {
	a := testEvent(7, OpInsert, `{"id":1}`)
	b := testEvent(8, OpUpdate, `{"id":2}`)
	b.PKBefore, b.GTID, b.CommitTime = `[9]`, "", a.CommitTime.Add(time.Second)
	cs, _ := packChunks(nil, []Event{a, b})
	want := `[{"s":7,"o":"i","k":[1],"a":{"id":1}},` +
		`{"s":8,"t":"2026-01-02 03:04:06.000006","g":"","e":108,"o":"u","k":[1],"kb":[9],"b":{"id":2},"a":{"id":2}}]`
	if len(cs) != 1 || string(cs[0].payload) != want {
		t.Fatalf("payload\n%s\nwant\n%s", cs[0].payload, want)
	}
}

func TestUnpackChunkRejects(t *testing.T) {
	h := &chunkHead{FirstSeq: 5, Schema: "db", Table: "t"}
	for _, p := range []string{
		``, `[`, `[]x`, `{"s":1}`, `[{"s":1,"o":"i"}]`, `[{"s":1,"o":"x","k":[1]}]`, `[{"s":"1","o":"i","k":[1]}]`,
		`[{"s":1,"o":"i","k":[1],"a":{"x":"}]`, `[{"s":1,"o":"i","k":[1],"z":1}]`, `[{"s":1,"o":"i","k":[1]} ]`,
		`[{"s":1,"o":"i","k":[1]},]`, `[{"s":1,"o":"i","k":[1],"a":}]`,
	} {
		err := unpackChunk(h, []byte(p), func(*Event) error { return nil })
		if err == nil {
			t.Errorf("payload %q accepted", p)
		} else if !strings.Contains(err.Error(), "db.t at seq 5") {
			t.Errorf("payload %q: error %q does not name the chunk", p, err)
		}
	}
	var n int
	if err := unpackChunk(h, []byte(`[]`), func(*Event) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("empty chunk: %d %v", n, err)
	}
}

func BenchmarkPackChunks(b *testing.B) {
	evs := randomEvents(rand.New(rand.NewPCG(3, 4)), 5000)
	var buf []byte
	for b.Loop() {
		_, buf = packChunks(buf, evs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
}
