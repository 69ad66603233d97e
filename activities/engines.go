package activities

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/dbtrail/dbtrail/internal/fold"
)

// maxIdleEngines bounds the DuckDB engines kept open between activities.
const maxIdleEngines = 2

// enginePool keeps fold engines open between activities of one worker:
// opening DuckDB costs tens of milliseconds, a large share of a small
// refresh. Each engine has its own spill folder; an engine is used by one
// activity at a time.
type enginePool struct {
	mu   sync.Mutex
	idle []*fold.Engine
	n    int
}

// engines is the pool of every Activities value in the process, keyed by
// work folder (and memory limit), so Activities stays a plain struct that
// can be copied.
var engines = struct {
	mu    sync.Mutex
	pools map[string]*enginePool
}{pools: map[string]*enginePool{}}

func (a *Activities) pool() *enginePool {
	key := a.WorkDir + "\x00" + a.FoldMemory
	engines.mu.Lock()
	defer engines.mu.Unlock()
	p := engines.pools[key]
	if p == nil {
		p = &enginePool{}
		engines.pools[key] = p
		removeDeadEngines(filepath.Join(a.WorkDir, "fold"))
	}
	return p
}

// removeDeadEngines removes the engine folders (spill and scratch files)
// of worker processes that no longer run, e.g. killed ones.
func removeDeadEngines(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		var pid, n int
		if _, err := fmt.Sscanf(e.Name(), "engine-%d-%d", &pid, &n); err != nil || pid == os.Getpid() {
			continue
		}
		if processAlive(pid) {
			continue
		}
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// keyMapDir caches the key maps of table files (fold.TableFile).
func (a *Activities) keyMapDir() string { return filepath.Join(a.WorkDir, "keymaps") }

// engine takes an engine from the pool or opens one; release returns it
// (or closes it when it failed, since its state is then unknown).
func (a *Activities) engine(ctx context.Context) (e *fold.Engine, release func(failed bool), err error) {
	p := a.pool()
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		e = p.idle[n-1]
		p.idle = p.idle[:n-1]
	} else {
		p.n++
	}
	id := p.n
	p.mu.Unlock()
	if e == nil {
		dir := filepath.Join(a.WorkDir, "fold", fmt.Sprintf("engine-%d-%d", os.Getpid(), id))
		if err := os.RemoveAll(dir); err != nil {
			return nil, nil, err
		}
		if e, err = fold.Open(ctx, fold.Options{TempDir: dir, MemoryLimit: a.FoldMemory, KeyMapDir: a.keyMapDir()}); err != nil {
			return nil, nil, err
		}
	}
	return e, func(failed bool) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if failed || len(p.idle) >= maxIdleEngines {
			e.Close()
			os.RemoveAll(e.TempDir())
			return
		}
		p.idle = append(p.idle, e)
	}, nil
}
