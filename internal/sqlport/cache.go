package sqlport

import (
	"container/list"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// DefaultCacheBytes bounds the tables the port keeps staged (Config.CacheBytes).
const DefaultCacheBytes = 2 << 30

// stageCache is the port's tables staged at a cut, shared by every
// connection: each table of a moment is written once (views.WriteTable: the
// table as it is at the cut, sorted by its key, in small row groups) and
// read by every session at exactly that cut (views.ReadTable). An entry is
// keyed by the source, the cut (base snapshot, seq, binlog position, GTID)
// and the table, so it is only ever read at the same cut. The files' bytes
// are bounded: past max, entries no session reads are removed, least
// recently used first (entries in use stay, so the bound is exceeded while
// more is in use than it).
type stageCache struct {
	dir string
	max int64

	mu      sync.Mutex
	size    int64
	n       int // files written, naming the next
	entries map[string]*staged
	lru     *list.List // of *staged not in use, least recently used at the front
}

// staged is one table staged at one cut.
type staged struct {
	key   string
	path  string
	size  int64
	users int
	ready chan struct{} // closed once written (or failed: err)
	err   error
	elem  *list.Element // in lru while users == 0
}

// openCache opens the staged tables' folder of cfg (CacheDir, or a new
// temp folder) and lets every session read and write it
// (Session.SharedDir).
func openCache(cfg *Config) (*stageCache, error) {
	if cfg.CacheBytes == 0 {
		cfg.CacheBytes = DefaultCacheBytes
	}
	dir := cfg.CacheDir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "dbtrail-sql-"); err != nil {
			return nil, fmt.Errorf("sql port: staged tables folder: %w", err)
		}
	}
	cfg.Session.SharedDir = dir
	return newStageCache(dir, cfg.CacheBytes)
}

// newStageCache keeps staged tables in dir (made if missing), at most max
// bytes of them not in use.
func newStageCache(dir string, max int64) (*stageCache, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sql port: staged tables folder: %w", err)
	}
	return &stageCache{dir: dir, max: max, entries: map[string]*staged{}, lru: list.New()}, nil
}

// acquire returns the entry of key, in use by the caller until release: a
// staged file (named with the extension ext), written now by write (to
// the path it is given) when no
// entry has it. Callers of the same key wait for the one writing; a failed
// write is not kept (the next acquire writes again).
func (c *stageCache) acquire(ctx context.Context, key, ext string, write func(path string) error) (*staged, error) {
	c.mu.Lock()
	e := c.entries[key]
	if e != nil {
		c.use(e)
		c.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			c.release(e)
			return nil, ctx.Err()
		}
		if e.err != nil {
			c.release(e)
			return nil, e.err
		}
		return e, nil
	}
	c.n++
	e = &staged{key: key, path: filepath.Join(c.dir, fmt.Sprintf("%d%s", c.n, ext)), users: 1, ready: make(chan struct{})}
	c.entries[key] = e
	c.mu.Unlock()

	err := write(e.path)
	var size int64
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(e.path); err == nil {
			size = fi.Size()
		}
	}
	c.mu.Lock()
	e.err, e.size = err, size
	if err != nil {
		delete(c.entries, key)
		os.Remove(e.path)
	} else {
		c.size += size
	}
	close(e.ready)
	c.mu.Unlock()
	if err != nil {
		c.release(e)
		return nil, err
	}
	c.evict()
	return e, nil
}

// has reports whether key has an entry (written, or being written).
func (c *stageCache) has(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries[key] != nil
}

// use marks e in use by one more caller (c.mu held).
func (c *stageCache) use(e *staged) {
	e.users++
	if e.elem != nil {
		c.lru.Remove(e.elem)
		e.elem = nil
	}
}

// release ends one caller's use of e; an entry no one uses may be evicted.
func (c *stageCache) release(e *staged) {
	c.mu.Lock()
	e.users--
	if e.users == 0 && c.entries[e.key] == e {
		e.elem = c.lru.PushBack(e)
	}
	c.mu.Unlock()
	c.evict()
}

// evict removes entries no one uses, least recently used first, until the
// files are within the bound.
func (c *stageCache) evict() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.size > c.max && c.lru.Len() > 0 {
		e := c.lru.Remove(c.lru.Front()).(*staged)
		e.elem = nil
		delete(c.entries, e.key)
		c.size -= e.size
		os.Remove(e.path)
	}
}

// bytes is the size of the staged files.
func (c *stageCache) bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}

// close removes the folder.
func (c *stageCache) close() error { return os.RemoveAll(c.dir) }
