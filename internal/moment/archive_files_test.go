package moment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/archive"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// memObject is an archive file in memory.
type memObject struct{ *bytes.Reader }

func (m memObject) Close() error { return nil }

var _ storage.ReaderAt = memObject{}

// TestArchiveFiles writes three hours of events of two tables with
// internal/archive's writer and reads them through the events seam, merged
// with the index's later events: one table's events in seq order, each
// once, images byte for byte. A file that fails its checksum, one that is
// missing, and one the listing misnames are errors naming the file.
func TestArchiveFiles(t *testing.T) {
	hour0 := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	var all []change.Event
	files := map[string][]byte{}
	var hours []ArchiveHour
	seq := uint64(0)
	for h := 0; h < 3; h++ {
		start := hour0.Add(time.Duration(h) * time.Hour)
		var evs []change.Event
		for i := 0; i < 40; i++ {
			seq++
			tbl := []string{"orders", "users"}[i%2]
			e := change.Event{Seq: seq, CommitTime: start.Add(time.Duration(i) * time.Minute), BinlogFile: "binlog.000001",
				EndPos: 1000 + seq, GTID: fmt.Sprintf("0-1-%d", seq), Schema: "shop", Table: tbl, Op: change.OpInsert,
				PK: fmt.Sprintf("[%d]", seq), SchemaVersion: 1, After: fmt.Appendf(nil, `{"id":%d,"v":"h%d"}`, seq, h)}
			evs = append(evs, e)
			all = append(all, e)
		}
		slices.SortStableFunc(evs, func(a, b change.Event) int {
			return strings.Compare(a.Table, b.Table)
		})
		var buf bytes.Buffer
		w, err := archive.NewWriter(&buf, "main", start, archive.WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range evs {
			if err := w.Append(&evs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("main/archive/%s.parquet", start.Format("2006010215"))
		files[name] = buf.Bytes()
		h, err := ArchiveHourOf(name, memObject{bytes.NewReader(buf.Bytes())})
		if err != nil {
			t.Fatal(err)
		}
		hours = append(hours, h)
	}
	// The index still holds the last hour and what came after it.
	var ix listEvents
	for _, e := range all[80:] {
		ix = append(ix, e)
	}
	for i := 0; i < 10; i++ {
		seq++
		ix = append(ix, change.Event{Seq: seq, Schema: "shop", Table: "orders", PK: fmt.Sprintf("[%d]", seq), Op: change.OpInsert})
	}
	store := ArchiveFiles{
		List: func(context.Context, string) ([]ArchiveHour, error) { return hours, nil },
		OpenFile: func(_ context.Context, h ArchiveHour) (storage.ReaderAt, error) {
			b, ok := files[h.Name]
			if !ok {
				return nil, fs.ErrNotExist
			}
			return memObject{bytes.NewReader(b)}, nil
		},
	}
	ev := Merge(ix, ArchiveEvents{Store: store})
	var got []change.Event
	if err := ev.TableEvents(context.Background(), "main", "shop", "orders", 10, 1000, func(e change.Event) error {
		got = append(got, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var want []change.Event
	for _, e := range append(append([]change.Event(nil), all[:80]...), ix...) {
		if e.Table == "orders" && e.Seq > 10 {
			want = append(want, e)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Seq != want[i].Seq || !bytes.Equal(got[i].After, want[i].After) || got[i].PK != want[i].PK {
			t.Fatalf("event %d: %+v, want %+v", i, got[i], want[i])
		}
	}

	read := func() error {
		return ev.TableEvents(context.Background(), "main", "shop", "orders", 0, 1000, func(change.Event) error { return nil })
	}
	// A byte of a row group flipped: the file's checksum fails, naming it.
	name := hours[1].Name
	good := files[name]
	bad := bytes.Clone(good)
	bad[10] ^= 0xff
	files[name] = bad
	err := read()
	var ce *archive.CorruptError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), name) {
		t.Fatalf("damaged archive: %v", err)
	}
	// A missing file.
	delete(files, name)
	if err := read(); err == nil || !strings.Contains(err.Error(), name) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing archive: %v", err)
	}
	// A file that is not the hour the listing says.
	files[name] = files[hours[0].Name]
	if err := read(); !errors.As(err, &ce) || !strings.Contains(err.Error(), "the listing says") {
		t.Fatalf("misnamed archive: %v", err)
	}
	files[name] = good
	if err := read(); err != nil {
		t.Fatal(err)
	}
}
