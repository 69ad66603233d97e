package archive

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
)

// testHour is the hour of the test files.
var testHour = time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)

// testTables are the tables random events spread over: plain, unicode,
// quotes and backslashes, names that sort close to each other.
var testTables = [][2]string{
	{"shop", "orders"}, {"shop", "order"}, {"shop", "orders_2"}, {"shop", "Orders"},
	{"shöp", "tëst"}, {"数据", "表格"}, {"emoji😀", "t😀"}, {"a\"b", "c\\d"}, {"a", "b c"},
	{"z", "x"},
}

// randomEvents returns n random events of the test hour over the first
// tables of testTables, in (schema, table, seq) order: every op, NULL and
// repeated GTIDs, key changes, empty and big images, unicode and escapes,
// binlog rotations and schema versions.
func randomEvents(rng *rand.Rand, n, tables int) []change.Event {
	evs := make([]change.Event, 0, n)
	seq := uint64(rng.IntN(1000) + 1)
	at := testHour.Add(time.Duration(rng.Int64N(int64(time.Minute)))).Truncate(time.Microsecond)
	file, pos, gtid := "mariadb-bin.000007", uint64(4), uint64(100)
	for len(evs) < n {
		// one transaction: a few events, one GTID, end position and time
		size := 1 + rng.IntN(8)
		if rng.IntN(20) == 0 {
			size = 200
		}
		at = at.Add(time.Duration(rng.Int64N(int64(5 * time.Second)))).Truncate(time.Microsecond)
		if at.Sub(testHour) >= time.Hour {
			at = testHour.Add(time.Hour - time.Microsecond)
		}
		if rng.IntN(50) == 0 {
			file, pos = fmt.Sprintf("mariadb-bin.%06d", rng.IntN(999999)), 4
		}
		pos += uint64(100 + rng.IntN(100000))
		gtid++
		g := fmt.Sprintf("0-1-%d", gtid)
		if rng.IntN(5) == 0 {
			g = ""
		}
		for i := 0; i < size && len(evs) < n; i++ {
			seq += 1 + uint64(rng.IntN(3)) // other hours' events may lie between
			tb := testTables[rng.IntN(tables)]
			evs = append(evs, randomEvent(rng, seq, at, file, pos, g, tb))
		}
	}
	sortEvents(evs)
	return evs
}

func randomEvent(rng *rand.Rand, seq uint64, at time.Time, file string, pos uint64, gtid string, tb [2]string) change.Event {
	e := change.Event{Seq: seq, CommitTime: at, BinlogFile: file, EndPos: pos, GTID: gtid, Schema: tb[0], Table: tb[1],
		Op: []change.Op{change.OpInsert, change.OpUpdate, change.OpDelete}[rng.IntN(3)], PK: fmt.Sprintf("[%d]", rng.IntN(100000)),
		SchemaVersion: uint32(1 + rng.IntN(3))}
	if rng.IntN(10) == 0 {
		e.PK = fmt.Sprintf(`[%d,"k\"ë😀\\%d"]`, rng.IntN(100), rng.IntN(100))
	}
	if e.Op != change.OpInsert {
		e.Before = randomImage(rng)
	}
	if e.Op != change.OpDelete {
		e.After = randomImage(rng)
	}
	if e.Op == change.OpUpdate && rng.IntN(4) == 0 {
		e.PKBefore = fmt.Sprintf("[%d]", rng.IntN(100000))
	}
	if rng.IntN(200) == 0 { // an event with an end position not fixed
		e.EndPos = 0
	}
	return e
}

func randomImage(rng *rand.Rand) []byte {
	switch rng.IntN(40) {
	case 0:
		return []byte(`{}`)
	case 1:
		return []byte{} // empty, not NULL: must stay empty
	case 2: // big and hardly compressible: pages of their own
		b := []byte(`{"blob":"`)
		for range 300_000 + rng.IntN(700_000) {
			b = append(b, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[rng.IntN(64)])
		}
		return append(b, `"}`...)
	}
	return fmt.Appendf(nil, `{"id":%d,"name":"n\"a\\m\u00e9 😀 %d","note":"%s","d":"%d.%02d","x":null}`,
		rng.IntN(1000000), rng.IntN(100), strings.Repeat("ab", rng.IntN(50)), rng.IntN(10000), rng.IntN(100))
}

// sortEvents orders evs by (schema, table, seq).
func sortEvents(evs []change.Event) {
	slices.SortFunc(evs, func(a, b change.Event) int {
		if c := strings.Compare(a.Schema, b.Schema); c != 0 {
			return c
		}
		if c := strings.Compare(a.Table, b.Table); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
}

// writeFile writes evs as the test hour's archive of source "main".
func writeFile(t testing.TB, evs []change.Event, opts WriterOptions) ([]byte, WriteResult) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, "main", testHour, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range evs {
		if err := w.Append(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	res, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res.Bytes != int64(buf.Len()) {
		t.Fatalf("result says %d bytes, %d written", res.Bytes, buf.Len())
	}
	return buf.Bytes(), res
}

// openFile opens an archive held in memory.
func openFile(t testing.TB, b []byte) *Reader {
	t.Helper()
	r, err := NewReader(bytes.NewReader(b), int64(len(b)), "test.parquet")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// readAll returns every event of r, or the first error.
func readAll(r *Reader) ([]change.Event, error) {
	var out []change.Event
	err := r.Events(func(e change.Event) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// sameEvents reports the first difference between got and want, "" when
// equal: every field, images byte for byte and NULL apart from empty,
// commit times equal and in UTC.
func sameEvents(got, want []change.Event) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d events, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !g.CommitTime.Equal(w.CommitTime) || g.CommitTime.Location() != time.UTC {
			return fmt.Sprintf("event %d (seq %d): commit time %v, want %v", i, w.Seq, g.CommitTime, w.CommitTime)
		}
		if !bytes.Equal(g.Before, w.Before) || (g.Before == nil) != (w.Before == nil) ||
			!bytes.Equal(g.After, w.After) || (g.After == nil) != (w.After == nil) {
			return fmt.Sprintf("event %d (seq %d): images differ", i, w.Seq)
		}
		g.CommitTime, w.CommitTime = time.Time{}, time.Time{}
		g.Before, g.After, w.Before, w.After = nil, nil, nil, nil
		if !reflect.DeepEqual(g, w) {
			return fmt.Sprintf("event %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	return ""
}
