package tail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dbtrail/dbtrail/internal/views"
)

// fakeStager is a table whose events are at seqs: a window file is their
// seqs, one line each; it records the ranges it staged.
type fakeStager struct {
	seqs []uint64

	mu         sync.Mutex
	staged     [][2]uint64
	fail       error
	failConcat error
}

func (f *fakeStager) stage(from, to uint64, path string) (int64, error) {
	f.mu.Lock()
	f.staged = append(f.staged, [2]uint64{from, to})
	fail := f.fail
	f.mu.Unlock()
	if fail != nil {
		return 0, fail
	}
	var b strings.Builder
	var n int64
	for _, s := range f.seqs {
		if s > from && s <= to {
			fmt.Fprintf(&b, "%d\n", s)
			n++
		}
	}
	return n, os.WriteFile(path, []byte(b.String()), 0o600)
}

func (f *fakeStager) join(path string, paths []string) error {
	if f.failConcat != nil {
		os.WriteFile(path, []byte("partial"), 0o600)
		return f.failConcat
	}
	var b []byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b = append(b, data...)
	}
	return os.WriteFile(path, b, 0o600)
}

// ranges returns the ranges staged since the last call.
func (f *fakeStager) ranges() [][2]uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.staged
	f.staged = nil
	return r
}

// readWindow is the seqs a window's files hold, in order.
func readWindow(t *testing.T, w cachedWindow) []string {
	t.Helper()
	var out []string
	for _, p := range w.paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Fields(string(data))...)
	}
	return out
}

// want is the seqs of f in (after, upto].
func (f *fakeStager) want(after, upto uint64) []string {
	var out []string
	for _, s := range f.seqs {
		if s > after && s <= upto {
			out = append(out, fmt.Sprint(s))
		}
	}
	return out
}

func newTestCache(t *testing.T, max int64) *Cache {
	t.Helper()
	c, err := NewCache(t.TempDir(), max)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestCacheStagesOnlyNewEvents: each question at a later cut stages only
// the events after the previous one's and reads the same window as a
// tail staged whole; a question at an earlier cut reads the segments up
// to it and stages the rest in its own folder, leaving the cache as it
// was; past cacheMaxSegments the segments are joined into one file; with
// no new event the last segment covers the new cut.
func TestCacheStagesOnlyNewEvents(t *testing.T) {
	f := &fakeStager{}
	for s := uint64(11); s <= 400; s += 3 {
		f.seqs = append(f.seqs, s)
	}
	c := newTestCache(t, 1<<30)
	key := cacheKey{source: "main", base: "20261207T000000Z", table: "app.t", after: 10}
	ask := func(upto uint64) cachedWindow {
		t.Helper()
		dir := t.TempDir()
		w, err := c.window(key, upto, dir, "1", f)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := readWindow(t, w), f.want(10, upto); !slices.Equal(got, want) || w.events != int64(len(want)) {
			t.Fatalf("cut %d: window %v (%d events), want %v", upto, got, w.events, want)
		}
		for _, p := range w.paths {
			if filepath.Dir(p) != dir {
				t.Fatalf("cut %d: a file outside the tail's folder: %s", upto, p)
			}
		}
		// The spans name each file's events: consecutive, from the
		// window's start to the cut, the cache's of one window but for a
		// last one staged in the tail's folder.
		from := key.after
		for i, sp := range w.spans {
			own := sp.Window == "" && i == len(w.spans)-1
			if sp.From != from || sp.Upto <= sp.From || (!own && sp.Window != c.windowName(key)) {
				t.Fatalf("cut %d: span %d %+v after %d", upto, i, sp, from)
			}
			from = sp.Upto
		}
		if len(w.spans) != len(w.paths) || from != upto {
			t.Fatalf("cut %d: %d spans for %d files, ending at %d", upto, len(w.spans), len(w.paths), from)
		}
		return w
	}
	ask(50)
	if r := f.ranges(); !slices.Equal(r, [][2]uint64{{10, 50}}) {
		t.Fatalf("first question staged %v", r)
	}
	w := ask(80)
	if r := f.ranges(); !slices.Equal(r, [][2]uint64{{50, 80}}) || w.staged != int64(len(f.want(50, 80))) || len(w.paths) != 2 {
		t.Fatalf("second question staged %v (%d events, %d files), want (50, 80] only", r, w.staged, len(w.paths))
	}
	// An earlier cut: the first segment, then its own file.
	before := c.Bytes()
	w = ask(65)
	if r := f.ranges(); !slices.Equal(r, [][2]uint64{{50, 65}}) || len(w.paths) != 2 || c.Bytes() != before {
		t.Fatalf("a question at an earlier cut staged %v into %d files, the cache %d bytes (was %d)", r, len(w.paths), c.Bytes(), before)
	}
	ask(80)
	if r := f.ranges(); len(r) != 0 {
		t.Fatalf("the same cut again staged %v", r)
	}
	// Past cacheMaxSegments all but the newest are joined: the joined file
	// ends where the previous question's files did, so a session that read
	// them reads only the newest (views' overlays).
	prev := ask(80).spans
	for upto := uint64(90); upto <= 160; upto += 10 {
		w := ask(upto)
		last := prev[len(prev)-1]
		if i := slices.IndexFunc(w.spans, func(sp views.Span) bool { return sp.File == last.File || sp.Upto == last.Upto }); i != len(w.spans)-2 {
			t.Fatalf("cut %d: spans %+v do not extend the previous question's %+v by one file", upto, w.spans, prev)
		}
		prev = w.spans
	}
	e := c.entries[key]
	if len(e.segs) > cacheMaxSegments {
		t.Fatalf("%d segments, want at most %d", len(e.segs), cacheMaxSegments)
	}
	files, err := os.ReadDir(c.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(e.segs) {
		t.Fatalf("%d files in the cache's folder for %d segments", len(files), len(e.segs))
	}
	// (161, 163] holds no event (161 and 164 do): the last segment
	// covers it.
	ask(161)
	f.ranges()
	n := len(e.segs)
	ask(163)
	if r := f.ranges(); !slices.Equal(r, [][2]uint64{{161, 163}}) || len(e.segs) != n || e.segs[n-1].upto != 163 {
		t.Fatalf("no new event: staged %v, %d segments (was %d), the last up to %d", r, len(e.segs), n, e.segs[n-1].upto)
	}
	ask(400)
}

// TestCacheEvictsLeastRecentlyUsed: past its bytes the cache drops the
// least recently used tables' files; a tail that read them keeps its
// links; a dropped table is staged whole again; a failed staging leaves
// the cache as it was.
func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	f := &fakeStager{}
	for s := uint64(1); s <= 1000; s++ {
		f.seqs = append(f.seqs, s)
	}
	c := newTestCache(t, 6000) // about two tables of 1,000 events
	key := func(table string) cacheKey { return cacheKey{source: "main", base: "b", table: table} }
	dirA := t.TempDir()
	wa, err := c.window(key("a"), 1000, dirA, "1", f)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"b", "c"} {
		if _, err := c.window(key(table), 1000, t.TempDir(), "1", f); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := c.entries[key("a")]; ok || c.Bytes() > 6000 {
		t.Fatalf("over its bytes the cache kept a (%d bytes): want the least recently used dropped", c.Bytes())
	}
	if got := readWindow(t, wa); len(got) != 1000 {
		t.Fatalf("the tail that read a lost its files: %d events", len(got))
	}
	f.ranges()
	if _, err := c.window(key("a"), 1000, t.TempDir(), "1", f); err != nil {
		t.Fatal(err)
	}
	if r := f.ranges(); !slices.Equal(r, [][2]uint64{{0, 1000}}) {
		t.Fatalf("a dropped table staged %v, want whole", r)
	}
	// A failure stages nothing into the cache.
	f.fail = errors.New("index unreachable")
	before := c.Bytes()
	if _, err := c.window(key("d"), 1000, t.TempDir(), "1", f); err == nil || c.Bytes() != before {
		t.Fatalf("a failed staging: %v, cache %d bytes (was %d)", err, c.Bytes(), before)
	}
	if _, ok := c.entries[key("d")]; ok {
		t.Fatal("a failed staging left an empty entry")
	}
}

// TestCacheConcurrentTails: tails of one table at cuts racing each other
// each read exactly their window (run with -race).
func TestCacheConcurrentTails(t *testing.T) {
	f := &fakeStager{}
	for s := uint64(1); s <= 500; s += 2 {
		f.seqs = append(f.seqs, s)
	}
	c := newTestCache(t, 4000)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				upto := uint64(60*i + 7*g + 1)
				table := fmt.Sprintf("t%d", g%3)
				w, err := c.window(cacheKey{source: "main", base: "b", table: table}, upto, t.TempDir(), "1", f)
				if err != nil {
					errs <- err
					return
				}
				var got []string
				for _, p := range w.paths {
					data, err := os.ReadFile(p)
					if err != nil {
						errs <- err
						return
					}
					got = append(got, strings.Fields(string(data))...)
				}
				if want := f.want(0, upto); !slices.Equal(got, want) {
					errs <- fmt.Errorf("%s at %d: %v, want %v", table, upto, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// segBytes is the size of the files of c's entries, by their segments.
func segBytes(c *Cache) int64 {
	var n int64
	for _, e := range c.entries {
		for _, s := range e.segs {
			n += s.bytes
		}
	}
	return n
}

// TestCacheEdges: a cut before the first segment stages on its own; the
// windows of another base, table file or start are not shared; a join
// that fails serves the segments as they are, with the bytes counted; a
// closed cache stages every tail on its own and leaves no file.
func TestCacheEdges(t *testing.T) {
	f := &fakeStager{}
	for s := uint64(1); s <= 300; s++ {
		f.seqs = append(f.seqs, s)
	}
	c := newTestCache(t, 1<<30)
	key := cacheKey{source: "main", base: "b1", table: "app.t", file: "app/t.parquet 10 f", after: 0}
	ask := func(k cacheKey, upto uint64) cachedWindow {
		t.Helper()
		w, err := c.window(k, upto, t.TempDir(), "1", f)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := readWindow(t, w), f.want(k.after, upto); !slices.Equal(got, want) {
			t.Fatalf("%+v at %d: %d events, want %d", k, upto, len(got), len(want))
		}
		return w
	}
	ask(key, 100)
	ask(key, 50) // before the first segment's end
	if r := f.ranges(); !slices.Equal(r, [][2]uint64{{0, 100}, {0, 50}}) || len(c.entries[key].segs) != 1 {
		t.Fatalf("a cut before the first segment staged %v, the cache %d segments", r, len(c.entries[key].segs))
	}
	for _, k := range []cacheKey{
		{source: "main", base: "b2", table: "app.t", file: key.file},
		{source: "main", base: "b1", table: "app.t", file: "app/t.parquet 11 g"},
		{source: "main", base: "b1", table: "app.t", file: key.file, after: 20},
		{source: "other", base: "b1", table: "app.t", file: key.file},
	} {
		ask(k, 100)
		if r := f.ranges(); len(r) != 1 || r[0] != [2]uint64{k.after, 100} {
			t.Fatalf("%+v read another window's segments: staged %v", k, r)
		}
	}
	// Past cacheMaxSegments with a failing join: every segment serves.
	f.failConcat = errors.New("disk full")
	for upto := uint64(110); upto <= 200; upto += 10 {
		ask(key, upto)
	}
	if n := len(c.entries[key].segs); n <= cacheMaxSegments {
		t.Fatalf("%d segments after failed joins", n)
	}
	if c.Bytes() != segBytes(c) {
		t.Fatalf("after failed joins the cache counts %d bytes, its segments hold %d", c.Bytes(), segBytes(c))
	}
	files, _ := os.ReadDir(c.dir)
	n := 0
	for _, e := range c.entries {
		n += len(e.segs)
	}
	if len(files) != n {
		t.Fatalf("%d files in the cache's folder for %d segments: a failed join left its file", len(files), n)
	}
	f.failConcat = nil
	ask(key, 210)
	if n := len(c.entries[key].segs); n != 2 || c.Bytes() != segBytes(c) {
		t.Fatalf("the next join: %d segments (want the joined one and the newest), %d bytes counted for %d", n, c.Bytes(), segBytes(c))
	}
	// Closed: every tail stages on its own.
	dir := t.TempDir()
	w := ask(key, 220)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readWindow(t, w); len(got) != 220 {
		t.Fatalf("a tail prepared before Close lost its files: %d events", len(got))
	}
	f.ranges()
	w, err := c.window(key, 230, dir, "1", f)
	if err != nil || !slices.Equal(readWindow(t, w), f.want(0, 230)) {
		t.Fatalf("after Close: %v", err)
	}
	if r := f.ranges(); !slices.Equal(r, [][2]uint64{{0, 230}}) {
		t.Fatalf("after Close staged %v, want the whole window on its own", r)
	}
	if _, err := os.Stat(c.dir); !os.IsNotExist(err) {
		t.Fatalf("after Close the cache's folder: %v", err)
	}
	// No cache at all (Reader.Cache nil): the same, one file of its own.
	var none *Cache
	w, err = none.window(key, 230, t.TempDir(), "1", f)
	if err != nil || len(w.paths) != 1 || w.staged != 230 || !slices.Equal(readWindow(t, w), f.want(0, 230)) {
		t.Fatalf("without a cache: %d files, %d staged, %v", len(w.paths), w.staged, err)
	}
}
