package archive

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// writeHour writes evs as the test hour's file of source main at a path
// under dir.
func writeHour(t *testing.T, dir string, evs []change.Event) HourFile {
	t.Helper()
	f, err := WriteHour(filepath.Join(dir, "main", "h.parquet"), "main", testHour, scanOf(evs), nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// stored puts f as the test hour's object of main in a new local store.
func stored(t *testing.T, f HourFile) (storage.Store, string) {
	t.Helper()
	st, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	name := ObjectName("main", testHour)
	if err := Put(t.Context(), st, name, f); err != nil {
		t.Fatal(err)
	}
	return st, name
}

// TestHourFileRoundTrip: WriteHour writes the same bytes a Writer does, with
// their digest, count and seqs; Put and Confirm store and check it;
// OpenStored reads the events back, and has none for a name not stored.
func TestHourFileRoundTrip(t *testing.T) {
	evs := randomEvents(rand.New(rand.NewPCG(7, 7)), 3000, 4)
	want, res := writeFile(t, evs, WriterOptions{ZstdLevel: 1})
	f := writeHour(t, t.TempDir(), evs)
	got, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := digest.Of(strings.NewReader(string(want)))
	if string(got) != string(want) || f.Digest != d || f.Events != 3000 || f.FirstSeq != res.Footer.FirstSeq || f.LastSeq != res.Footer.LastSeq {
		t.Fatalf("hour file %+v (%d bytes), want %d bytes %v", f, len(got), len(want), d)
	}
	st, name := stored(t, f)
	if err := Confirm(t.Context(), st, name, f); err != nil {
		t.Fatal(err)
	}
	scan, done, err := OpenStored(t.Context(), st, name, "main", testHour)
	if err != nil {
		t.Fatal(err)
	}
	var back []change.Event
	err = scan(func(e change.Event) error { back = append(back, e); return nil })
	done()
	if err != nil {
		t.Fatal(err)
	}
	if diff := sameEvents(back, evs); diff != "" {
		t.Fatal(diff)
	}
	if scan, _, err := OpenStored(t.Context(), st, ObjectName("main", testHour.Add(time.Hour)), "main", testHour); scan != nil || err != nil {
		t.Fatalf("a name not stored: scan %v, %v", scan != nil, err)
	}
}

// TestHourFileRefusals: a stored file of another hour or source, or
// damaged, is a *CorruptError; Confirm refuses an object of other content
// or a file whose count the footer does not say; an event the Writer
// refuses leaves no file.
func TestHourFileRefusals(t *testing.T) {
	evs := randomEvents(rand.New(rand.NewPCG(8, 8)), 500, 2)
	dir := t.TempDir()
	f := writeHour(t, dir, evs)
	st, name := stored(t, f)
	var err error
	var ce *CorruptError
	for _, c := range []struct{ source string }{{"main"}, {"other"}} {
		hour := testHour
		if c.source == "main" {
			hour = testHour.Add(-time.Hour)
		}
		if _, _, err := OpenStored(t.Context(), st, name, c.source, hour); !errors.As(err, &ce) || !strings.Contains(err.Error(), "holds source main") {
			t.Errorf("source %s hour %s: %v, want a CorruptError", c.source, hour, err)
		}
	}
	wrongCount := f
	wrongCount.Events++
	if err := Confirm(t.Context(), st, name, wrongCount); err == nil || !strings.Contains(err.Error(), "footer says") {
		t.Errorf("confirm with another count: %v", err)
	}
	other := writeHour(t, t.TempDir(), evs[:100])
	if err := Confirm(t.Context(), st, name, other); err == nil || !strings.Contains(err.Error(), "stored object is") {
		t.Errorf("confirm of other content: %v", err)
	}
	b, _ := os.ReadFile(f.Path)
	damaged := filepath.Join(t.TempDir(), "damaged")
	if err := os.WriteFile(damaged, b[:len(b)-10], 0o644); err != nil {
		t.Fatal(err)
	}
	dd, _ := digest.Of(strings.NewReader(string(b[:len(b)-10])))
	if err := Put(t.Context(), st, name, HourFile{Path: damaged, Digest: dd}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := OpenStored(t.Context(), st, name, "main", testHour); !errors.As(err, &ce) {
		t.Errorf("damaged file: %v, want a CorruptError", err)
	}
	bad := []change.Event{evs[1], evs[0]} // not in file order
	path := filepath.Join(dir, "bad.parquet")
	_, err = WriteHour(path, "main", testHour, scanOf(bad), nil)
	var ee *EventError
	if !errors.As(err, &ee) {
		t.Errorf("events out of order: %v, want an EventError", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a refused hour left a file: %v", err)
	}
}

// TestPrefetch: every event comes through in order; an error of the
// consumer stops the scan and is returned; an error of the scan is
// returned.
func TestPrefetch(t *testing.T) {
	evs := randomEvents(rand.New(rand.NewPCG(9, 9)), 3*prefetchBatch+17, 3)
	var got []change.Event
	if err := Prefetch(scanOf(evs))(func(e change.Event) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if diff := sameEvents(got, evs); diff != "" {
		t.Fatal(diff)
	}
	stop := errors.New("stop")
	n := 0
	err := Prefetch(scanOf(evs))(func(change.Event) error {
		if n++; n == prefetchBatch+5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != prefetchBatch+5 {
		t.Fatalf("consumer stopped at %d: %v", n, err)
	}
	boom := errors.New("index gone")
	failing := func(fn func(change.Event) error) error {
		for _, e := range evs[:10] {
			if err := fn(e); err != nil {
				return err
			}
		}
		return boom
	}
	if err := Prefetch(failing)(func(change.Event) error { return nil }); !errors.Is(err, boom) {
		t.Fatalf("scan failed: %v", err)
	}
}
