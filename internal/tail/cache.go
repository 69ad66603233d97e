package tail

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/views"
)

// DefaultCacheBytes bounds a Cache's files by default.
const DefaultCacheBytes = 512 << 20

// cacheMaxSegments is the most files a table's cached window keeps: past
// it all but the newest are joined into one (fold.JoinWindowFiles, which
// also folds them to the newest effect of each key), since a view reads
// each file and a question asked every second for a minute would
// otherwise read sixty.
const cacheMaxSegments = 8

// Cache keeps the tables' staged windows between the tails of a process
// (a serve process, the SQL port, a query shell), so that the next
// question of the same snapshot stages only the events after the last
// one's cut (docs/tail.md, "The tail cache"). A table's window from its
// base snapshot is kept as segment files of consecutive events, each
// ending at the cut of the question that staged it; a tail whose cut is
// at or after the newest segment's end reads every segment and stages
// the events after it as the next segment; a tail at an earlier cut
// reads the segments up to its cut and stages the rest in its own folder.
// Events up to a cut never change (the cut is a captured transaction),
// so a segment holds the same rows for every later question.
//
// A tail reads the segments through hard links in its own folder (a copy
// where linking fails): evicting a segment never pulls a file from under a
// session. Past maxBytes the least recently used tables' files are
// removed, but not a table's a tail is reading or extending (so the files
// may exceed maxBytes by those, and a window larger than maxBytes is
// removed after each use). A Cache is safe for concurrent use; Close
// removes its folder.
type Cache struct {
	// MaxSegments, when set before the cache's first use, replaces
	// cacheMaxSegments (tests join sooner with it).
	MaxSegments int

	dir      string
	maxBytes int64

	mu      sync.Mutex
	entries map[cacheKey]*cacheEntry
	bytes   int64  // of every entry's segments
	tick    uint64 // the last use's number
	files   int    // segment files made, naming the next
	joins   int    // joins done
	closed  bool
}

// cacheKey names one table's window: its source, the base snapshot and
// the base's table file (its name, rows and fingerprint, so that a
// snapshot made again under the same ID is another window), and the seq
// the window starts after.
type cacheKey struct {
	source, base, table, file string
	after                     uint64
}

// cacheEntry is one table's cached window. mu is held while a tail
// reads or extends it; eviction skips an entry in use.
type cacheEntry struct {
	mu   sync.Mutex
	key  cacheKey
	segs []segment
	used uint64 // the last use's tick (Cache.mu)
	gone bool   // evicted: its files are removed
}

// segment is one file of a cached window: the table's events in
// (the previous segment's upto, upto].
type segment struct {
	path   string
	upto   uint64
	events int64
	bytes  int64
}

// NewCache makes a cache whose files live in a new folder under parent
// (the system's temp folder when empty), bounded by maxBytes (at least
// one byte). Keep parent on the file system of the sessions' temp folders
// so that linking works.
func NewCache(parent string, maxBytes int64) (*Cache, error) {
	if maxBytes < 1 {
		return nil, fmt.Errorf("tail cache: %d bytes: want at least 1", maxBytes)
	}
	if parent != "" {
		if err := os.MkdirAll(parent, filemode.Dir()); err != nil {
			return nil, fmt.Errorf("tail cache: %w", err)
		}
	}
	dir, err := os.MkdirTemp(parent, "dbtrail-tail-cache-")
	if err != nil {
		return nil, fmt.Errorf("tail cache: %w", err)
	}
	return &Cache{dir: dir, maxBytes: maxBytes, entries: map[cacheKey]*cacheEntry{}}, nil
}

// Close removes the cache's files once the tails reading or extending
// them are done; tails already prepared keep theirs (linked). After Close
// every tail stages its windows in its own folder, as without a cache.
func (c *Cache) Close() error {
	c.mu.Lock()
	c.closed = true
	entries := c.entries
	c.entries, c.bytes = map[cacheKey]*cacheEntry{}, 0
	c.mu.Unlock()
	for _, e := range entries {
		e.mu.Lock() // waits for a tail in it
		e.segs, e.gone = nil, true
		e.mu.Unlock()
	}
	return os.RemoveAll(c.dir)
}

// Joins is how many times a table's segments were joined into one.
func (c *Cache) Joins() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.joins
}

// Bytes is the size of the cached files.
func (c *Cache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// stager writes one table's window files.
type stager interface {
	// stage writes the table's events in (from, to] as one window file
	// at path and returns how many there were.
	stage(from, to uint64, path string) (int64, error)
	// join writes the window files paths, in order, as one at path
	// that reads as the same window (fold.JoinWindowFiles: folded to the
	// newest effect of each key).
	join(path string, paths []string) error
}

// cachedWindow is what window hands a tail: its files, in stream order,
// the events they hold and how many of them were staged now.
type cachedWindow struct {
	paths          []string
	spans          []views.Span // paths[i]'s events; a file staged into the tail's folder has none
	events, staged int64
}

// window returns the files of key's window up to upto, linked into dir as
// <name>-<i>.window: the cached segments up to upto, then the events after
// them, staged by st: into the cache when they extend it, else (an earlier
// cut than the cache's, a closed cache, or none: c nil) into dir, without
// holding the table's entry.
func (c *Cache) window(key cacheKey, upto uint64, dir, name string, st stager) (cachedWindow, error) {
	for {
		e := c.entry(key)
		if e == nil { // no cache, or closed
			return stageOwn(cachedWindow{}, key.after, upto, dir, name, st)
		}
		e.mu.Lock()
		if e.gone { // evicted between entry and the lock: a new one
			e.mu.Unlock()
			continue
		}
		w, from, grew, err := c.read(e, upto, dir, name, st)
		if len(e.segs) == 0 {
			c.drop(e)
		}
		e.mu.Unlock()
		c.account(grew)
		if err != nil || from >= upto {
			return w, err
		}
		return stageOwn(w, from, upto, dir, name, st)
	}
}

// stageOwn appends to w the events in (from, upto] staged into dir as
// <name>-<i>.window, i the next file of w.
func stageOwn(w cachedWindow, from, upto uint64, dir, name string, st stager) (cachedWindow, error) {
	path := filepath.Join(dir, fmt.Sprintf("%s-%d.window", name, len(w.paths)))
	events, err := st.stage(from, upto, path)
	if err != nil {
		return cachedWindow{}, err
	}
	w.paths, w.spans = append(w.paths, path), append(w.spans, views.Span{File: path, From: from, Upto: upto})
	w.events += events
	w.staged += events
	return w, nil
}

// entry returns key's entry, made when missing, marked used now; nil when
// the cache is closed or c is nil.
func (c *Cache) entry(key cacheKey) *cacheEntry {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	e := c.entries[key]
	if e == nil {
		e = &cacheEntry{key: key}
		c.entries[key] = e
	}
	c.tick++
	e.used = c.tick
	return e
}

// drop removes e (held, without segments) from the cache.
func (c *Cache) drop(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.gone = true
	if c.entries[e.key] == e {
		delete(c.entries, e.key)
	}
}

// read serves a tail from e (held): the segments ending at or before upto,
// linked into dir, after extending the cache with the events up to upto
// when every segment ends before it. from is where the events not served
// start (upto when none are left: else the caller stages (from, upto] on
// its own). grew is how many bytes e's segments grew by (negative when
// joined), also on an error.
func (c *Cache) read(e *cacheEntry, upto uint64, dir, name string, st stager) (w cachedWindow, from uint64, grew int64, err error) {
	n := 0 // the segments at or before upto
	for n < len(e.segs) && e.segs[n].upto <= upto {
		n++
	}
	from = e.key.after
	if n > 0 {
		from = e.segs[n-1].upto
	}
	if from < upto && n == len(e.segs) {
		d, err := c.grow(e, from, upto, st)
		grew += d
		if err != nil {
			return cachedWindow{}, from, grew, err
		}
		w.staged = e.segs[len(e.segs)-1].events
		from, n = upto, len(e.segs)
		if len(e.segs) > max(cmp.Or(c.MaxSegments, cacheMaxSegments), 2) {
			// Best effort: the segments serve as they are when joining
			// fails (a full disk), and the next question tries again.
			if d, err := c.join(e, st); err == nil {
				grew += d
				n = len(e.segs)
			}
		}
	}
	start := e.key.after
	for i, s := range e.segs[:n] {
		p := filepath.Join(dir, fmt.Sprintf("%s-%d.window", name, i))
		if err := linkOrCopy(s.path, p); err != nil {
			return cachedWindow{}, from, grew, fmt.Errorf("tail cache: %w", err)
		}
		w.paths = append(w.paths, p)
		w.spans = append(w.spans, views.Span{Window: c.windowName(e.key), File: s.path, From: start, Upto: s.upto})
		w.events += s.events
		start = s.upto
	}
	return w, from, grew, nil
}

// grow stages the events in (from, upto] as a new last segment of e
// (held), or moves the last segment's end to upto when there are none,
// and returns the bytes added. On an error e is as it was.
func (c *Cache) grow(e *cacheEntry, from, upto uint64, st stager) (int64, error) {
	path := c.newPath()
	events, err := st.stage(from, upto, path)
	if err != nil {
		os.Remove(path)
		return 0, err
	}
	if events == 0 && len(e.segs) > 0 {
		// Nothing new: the last segment holds the events up to upto.
		os.Remove(path)
		e.segs[len(e.segs)-1].upto = upto
		return 0, nil
	}
	seg, err := statSegment(path, upto, events)
	if err != nil {
		os.Remove(path)
		return 0, err
	}
	e.segs = append(e.segs, seg)
	return seg.bytes, nil
}

// join replaces e's segments but the newest by one file of their rows and
// returns how many bytes that added (negative when it saved some). The
// newest stays a file of its own: a session that read the others folds
// only it (views' overlays: the joined file ends where it did). On an
// error e is as it was.
func (c *Cache) join(e *cacheEntry, st stager) (int64, error) {
	old, newest := e.segs[:len(e.segs)-1], e.segs[len(e.segs)-1]
	paths := make([]string, len(old))
	var events, before int64
	for i, s := range old {
		paths[i] = s.path
		events += s.events
		before += s.bytes
	}
	path := c.newPath()
	if err := st.join(path, paths); err != nil {
		os.Remove(path)
		return 0, err
	}
	seg, err := statSegment(path, old[len(old)-1].upto, events)
	if err != nil {
		os.Remove(path)
		return 0, err
	}
	for _, p := range paths {
		os.Remove(p)
	}
	e.segs = []segment{seg, newest}
	c.mu.Lock()
	c.joins++
	c.mu.Unlock()
	return seg.bytes - before, nil
}

// windowName is the text naming key's window of this cache in the spans
// of its files (views.Span.Window).
func (c *Cache) windowName(key cacheKey) string {
	return fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%s\x00%d", c.dir, key.source, key.base, key.table, key.file, key.after)
}

// newPath names a new segment file of the cache.
func (c *Cache) newPath() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.files++
	return filepath.Join(c.dir, fmt.Sprintf("%d.window", c.files))
}

// account adds grew bytes and evicts the least recently used entries not
// in use until the files fit maxBytes.
func (c *Cache) account(grew int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bytes += grew
	if c.bytes <= c.maxBytes {
		return
	}
	lru := make([]*cacheEntry, 0, len(c.entries))
	for _, e := range c.entries {
		lru = append(lru, e)
	}
	slices.SortFunc(lru, func(a, b *cacheEntry) int { return cmp.Compare(a.used, b.used) })
	for _, e := range lru {
		if c.bytes <= c.maxBytes {
			return
		}
		if !e.mu.TryLock() {
			continue // in use: its tail is reading or extending it
		}
		for _, s := range e.segs {
			os.Remove(s.path)
			c.bytes -= s.bytes
		}
		e.segs, e.gone = nil, true
		delete(c.entries, e.key)
		e.mu.Unlock()
	}
}

// statSegment is the segment of the file at path.
func statSegment(path string, upto uint64, events int64) (segment, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return segment{}, fmt.Errorf("tail cache: %w", err)
	}
	return segment{path: path, upto: upto, events: events, bytes: fi.Size()}, nil
}

// linkOrCopy makes dst the file src: a hard link, or a copy where the
// file system refuses one.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := filemode.Create(dst)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
