package archive

import (
	"io"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
)

// TestWriterMemoryBounded streams 400,000 events (made one at a time, never
// held) through a Writer with 4 MiB row groups and checks the live heap
// after each row group: it stays within a bound set by the row group, not
// by the hour (one row group, and about 20 MiB of zstd encoder state).
func TestWriterMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	w, err := NewWriter(io.Discard, "main", testHour, WriterOptions{RowGroupBytes: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var heap []uint64 // live heap after each row group
	var ms runtime.MemStats
	img := make([]byte, 0, 256)
	for i := range 400_000 {
		img = append(img[:0], `{"id":`...)
		img = strconv.AppendInt(img, int64(i), 10)
		img = append(img, `,"name":"name-`...)
		img = strconv.AppendInt(img, int64(i*7919%1000003), 10)
		img = append(img, `","pad":"0123456789012345678901234567890123456789012345678901234567890123456789"}`...)
		e := change.Event{Seq: uint64(i + 1), CommitTime: testHour.Add(time.Duration(i) * time.Millisecond), BinlogFile: "mariadb-bin.000001",
			EndPos: uint64(1000 + i), GTID: "0-1-" + strconv.Itoa(i/10), Schema: "s", Table: "t", Op: change.OpInsert,
			PK: "[" + strconv.Itoa(i) + "]", SchemaVersion: 1, After: img}
		if err := w.Append(&e); err != nil {
			t.Fatal(err)
		}
		if len(w.groups) != len(heap) {
			runtime.GC()
			runtime.GC() // and the pools' victims
			runtime.ReadMemStats(&ms)
			heap = append(heap, ms.HeapAlloc)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(heap) < 10 {
		t.Fatalf("%d row groups", len(heap))
	}
	// After two row groups everything is allocated: later ones reuse it.
	base, peak := heap[1], slices.Max(heap[2:])
	t.Logf("%d row groups; live heap after the second %.1f MiB, at most %.1f MiB after", len(heap), float64(base)/(1<<20), float64(peak)/(1<<20))
	if peak > base+4<<20 || peak > 96<<20 {
		t.Fatalf("live heap grows: %d bytes after the second row group, %d later", base, peak)
	}
}
