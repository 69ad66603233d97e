package archive

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
)

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n, tbl int
		opts   WriterOptions
	}{
		{"one table", 500, 1, WriterOptions{}},
		{"many tables", 3000, len(testTables), WriterOptions{}},
		{"small row groups", 3000, 4, WriterOptions{RowGroupRows: 37}},
		{"small byte bound", 800, 3, WriterOptions{RowGroupBytes: 4096}},
		{"zstd level", 500, 2, WriterOptions{ZstdLevel: 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.n)))
			evs := randomEvents(rng, tc.n, tc.tbl)
			b, res := writeFile(t, evs, tc.opts)
			r := openFile(t, b)
			got, err := readAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if d := sameEvents(got, evs); d != "" {
				t.Fatal(d)
			}
			checkFooter(t, r.Footer(), evs)
			if res.RowGroups != len(r.groups) || res.Footer.Events != int64(len(evs)) {
				t.Fatalf("write result %+v", res)
			}
			if err := r.Verify(); err != nil {
				t.Fatal(err)
			}
			t.Logf("%d events, %d tables, %d row groups, %d bytes", len(evs), len(res.Footer.Tables), res.RowGroups, len(b))
		})
	}
}

// checkFooter compares f with what evs (in file order) make it.
func checkFooter(t *testing.T, f Footer, evs []change.Event) {
	t.Helper()
	if f.Source != "main" || !f.Hour.Equal(testHour) || f.Hour.Location() != time.UTC || f.WriterVersion != WriterVersion ||
		f.Events != int64(len(evs)) {
		t.Fatalf("footer %+v", f)
	}
	var want []TableCount
	var first, last uint64
	for i, e := range evs {
		if n := len(want); n == 0 || want[n-1].Schema != e.Schema || want[n-1].Table != e.Table {
			want = append(want, TableCount{Schema: e.Schema, Table: e.Table, FirstSeq: e.Seq})
		}
		tc := &want[len(want)-1]
		tc.Events++
		tc.LastSeq = e.Seq
		if i == 0 || e.Seq < first {
			first = e.Seq
		}
		last = max(last, e.Seq)
	}
	if f.FirstSeq != first || f.LastSeq != last || len(f.Tables) != len(want) {
		t.Fatalf("footer seqs %d..%d, %d tables; want %d..%d, %d tables", f.FirstSeq, f.LastSeq, len(f.Tables), first, last, len(want))
	}
	for i := range want {
		if f.Tables[i] != want[i] {
			t.Fatalf("footer table %d: %+v, want %+v", i, f.Tables[i], want[i])
		}
	}
}

// recordingReaderAt records every range read.
type recordingReaderAt struct {
	r     *bytes.Reader
	reads [][2]int64
}

func (r *recordingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	r.reads = append(r.reads, [2]int64{off, off + int64(len(p))})
	return r.r.ReadAt(p, off)
}

// TestTableEvents reads every table alone: its events are those of the full
// read, and nothing outside its own row groups is read.
func TestTableEvents(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	evs := randomEvents(rng, 4000, len(testTables))
	b, _ := writeFile(t, evs, WriterOptions{RowGroupRows: 150})
	rec := &recordingReaderAt{r: bytes.NewReader(b)}
	r, err := NewReader(rec, int64(len(b)), "test.parquet")
	if err != nil {
		t.Fatal(err)
	}
	for ti, tb := range r.Footer().Tables {
		rec.reads = nil
		var got []change.Event
		if err := r.TableEvents(tb.Schema, tb.Table, func(e change.Event) error {
			got = append(got, e)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var want []change.Event
		for _, e := range evs {
			if e.Schema == tb.Schema && e.Table == tb.Table {
				want = append(want, e)
			}
		}
		if d := sameEvents(got, want); d != "" {
			t.Fatalf("%s.%s: %s", tb.Schema, tb.Table, d)
		}
		if len(rec.reads) == 0 {
			t.Fatalf("%s.%s: nothing read", tb.Schema, tb.Table)
		}
		for _, rd := range rec.reads {
			inside := false
			for _, g := range r.groups {
				if g.Table == ti && rd[0] >= g.Offset && rd[1] <= g.Offset+g.Bytes {
					inside = true
				}
			}
			if !inside {
				t.Fatalf("%s.%s: read bytes %d..%d outside its row groups", tb.Schema, tb.Table, rd[0], rd[1])
			}
		}
	}
	for _, missing := range [][2]string{{"shop", "nope"}, {"", ""}, {"shop", "orders "}, {"Shop", "orders"}} {
		if err := r.TableEvents(missing[0], missing[1], func(change.Event) error { return errors.New("event") }); err != nil {
			t.Fatalf("%q.%q: %v", missing[0], missing[1], err)
		}
	}
	stop := errors.New("stop")
	if err := r.TableEvents("shop", "orders", func(change.Event) error { return stop }); err != stop {
		t.Fatalf("callback error returned as %v", err)
	}
	if err := r.Events(func(change.Event) error { return stop }); err != stop {
		t.Fatalf("callback error returned as %v", err)
	}
}

// TestEmptyAndEdges covers a file without events, seqs past 2^63 (stored
// in a signed Parquet INT64, ordered as unsigned), one huge event over the
// byte bound, and the first and last microsecond of the hour.
func TestEmptyAndEdges(t *testing.T) {
	b, res := writeFile(t, nil, WriterOptions{})
	r := openFile(t, b)
	if got, err := readAll(r); err != nil || len(got) != 0 || res.RowGroups != 0 {
		t.Fatalf("empty file: %d events, %v, %+v", len(got), err, res)
	}
	if f := r.Footer(); f.Events != 0 || f.FirstSeq != 0 || f.LastSeq != 0 || len(f.Tables) != 0 {
		t.Fatalf("empty footer %+v", f)
	}
	base := change.Event{CommitTime: testHour, BinlogFile: "b.000001", Schema: "s", Table: "t", Op: change.OpInsert, PK: "[1]", After: []byte(`{}`)}
	var evs []change.Event
	for i, seq := range []uint64{1<<63 - 1, 1 << 63, 1<<63 + 1, 1<<64 - 2, 1<<64 - 1} {
		e := base
		e.Seq = seq
		if i%2 == 1 {
			e.CommitTime = testHour.Add(time.Hour - time.Microsecond)
		}
		evs = append(evs, e)
	}
	huge := base
	huge.Seq, huge.Table, huge.After = 5, "u", []byte(`{"x":"`+strings.Repeat("y", 3<<20)+`"}`)
	evs = append(evs, huge, change.Event{Seq: 6, CommitTime: testHour, Schema: "s", Table: "u", Op: change.OpDelete, PK: "[2]", Before: []byte(`{}`)})
	b, res = writeFile(t, evs, WriterOptions{RowGroupBytes: 1 << 20})
	r = openFile(t, b)
	got, err := readAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if d := sameEvents(got, evs); d != "" {
		t.Fatal(d)
	}
	checkFooter(t, r.Footer(), evs)
	if res.RowGroups != 3 {
		t.Fatalf("%d row groups, want 3 (table s.t, the huge event alone, the next)", res.RowGroups)
	}
}

// TestWriterRefuses checks every event the Writer must refuse, and that it
// stays usable after.
func TestWriterRefuses(t *testing.T) {
	if _, err := NewWriter(&bytes.Buffer{}, "", testHour, WriterOptions{}); err == nil {
		t.Fatal("empty source accepted")
	}
	if _, err := NewWriter(&bytes.Buffer{}, "main", testHour.Add(time.Minute), WriterOptions{}); err == nil {
		t.Fatal("hour not on the hour accepted")
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, "main", testHour, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ok := change.Event{Seq: 10, CommitTime: testHour.Add(time.Minute), BinlogFile: "b.000001", Schema: "s", Table: "m", Op: change.OpInsert, PK: "[1]", After: []byte(`{}`)}
	if err := w.Append(&ok); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(e *change.Event){
		"seq not growing":       func(e *change.Event) { e.Seq = 10 },
		"table before":          func(e *change.Event) { e.Seq, e.Table = 11, "a" },
		"schema before":         func(e *change.Event) { e.Seq, e.Schema, e.Table = 11, "r", "z" },
		"seq 0 in a new table":  func(e *change.Event) { e.Seq, e.Table = 0, "n" },
		"unknown op":            func(e *change.Event) { e.Seq, e.Op = 11, 'x' },
		"hour before":           func(e *change.Event) { e.Seq, e.CommitTime = 11, testHour.Add(-time.Microsecond) },
		"hour after":            func(e *change.Event) { e.Seq, e.CommitTime = 11, testHour.Add(time.Hour) },
		"nanoseconds":           func(e *change.Event) { e.Seq, e.CommitTime = 11, testHour.Add(time.Nanosecond) },
		"binlog file not UTF-8": func(e *change.Event) { e.Seq, e.BinlogFile = 11, "b\xff" },
		"gtid not UTF-8":        func(e *change.Event) { e.Seq, e.GTID = 11, "0-1-\xff" },
		"table not UTF-8":       func(e *change.Event) { e.Seq, e.Table = 11, "n\xff" },
		"pk not UTF-8":          func(e *change.Event) { e.Seq, e.PK = 11, "[\"\xff\"]" },
		"pk_before not UTF-8":   func(e *change.Event) { e.Seq, e.PKBefore = 11, "[\"\xfe\"]" },
		"image not UTF-8":       func(e *change.Event) { e.Seq, e.Before = 11, []byte("{\"a\":\"\xc3\"}") },
	} {
		e := ok
		mod(&e)
		var ee *EventError
		if err := w.Append(&e); !errors.As(err, &ee) || ee.Seq != e.Seq {
			t.Fatalf("%s: %v", name, err)
		}
	}
	next := ok
	next.Seq, next.Table = 12, "n"
	if err := w.Append(&next); err != nil {
		t.Fatal(err)
	}
	back := ok
	back.Seq = 13
	if err := w.Append(&back); err == nil {
		t.Fatal("a table came back")
	}
	res, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(openFile(t, buf.Bytes()))
	if err != nil || res.Footer.Events != 2 {
		t.Fatal(err, res)
	}
	if d := sameEvents(got, []change.Event{ok, next}); d != "" {
		t.Fatal(d)
	}
	if err := w.Append(&next); err == nil {
		t.Fatal("append after close")
	}
	if _, err := w.Close(); err == nil {
		t.Fatal("second close")
	}
}

// failingWriter fails every write after the first n bytes.
type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

func TestWriterWriteError(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	evs := randomEvents(rng, 500, 2)
	w, err := NewWriter(&failingWriter{n: 100}, "main", testHour, WriterOptions{RowGroupRows: 10})
	if err != nil {
		t.Fatal(err)
	}
	var appendErr error
	for i := range evs {
		if appendErr = w.Append(&evs[i]); appendErr != nil {
			break
		}
	}
	if appendErr == nil || !strings.Contains(appendErr.Error(), "disk full") {
		t.Fatalf("append: %v", appendErr)
	}
	if err := w.Append(&evs[len(evs)-1]); err != appendErr {
		t.Fatalf("append after a write error: %v", err)
	}
	if _, err := w.Close(); err == nil {
		t.Fatal("close after a write error succeeded")
	}
}
