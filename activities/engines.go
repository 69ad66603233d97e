package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/dbtrail/dbtrail/internal/fold"
)

// maxIdleEngines bounds the DuckDB engines a pool keeps open between
// activities.
const maxIdleEngines = 2

// EnginePool keeps fold engines (DuckDB) open between the activities of one
// worker: opening DuckDB costs tens of milliseconds, a large share of a
// small refresh. It belongs to the worker that created it (NewEnginePool)
// and is closed when that worker stops (Close). Each engine has its own
// spill folder under <work dir>/fold; an engine is used by one activity at
// a time. Safe for concurrent use.
type EnginePool struct {
	workDir, memory string
	maxIdle         int

	mu     sync.Mutex
	idle   []*fold.Engine
	n      int
	closed bool
}

// NewEnginePool returns the pool of a worker whose activities use workDir
// and foldMemory (Activities.WorkDir, Activities.FoldMemory). It removes
// the engine folders that killed worker processes left there.
func NewEnginePool(workDir, foldMemory string) *EnginePool {
	removeDeadEngines(filepath.Join(workDir, "fold"))
	return &EnginePool{workDir: workDir, memory: foldMemory, maxIdle: maxIdleEngines}
}

// Close closes the idle engines and removes their folders; engines in use
// are closed when they are released. It is idempotent.
func (p *EnginePool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var errs []error
	for _, e := range p.idle {
		errs = append(errs, closeEngine(e))
	}
	p.idle = nil
	return errors.Join(errs...)
}

func closeEngine(e *fold.Engine) error {
	return errors.Join(e.Close(), os.RemoveAll(e.TempDir()))
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

// engine takes an engine from the worker's pool (Activities.Engines) or
// opens one; release returns it (or closes it when it failed, since its
// state is then unknown). Without a pool every engine is closed on release.
func (a *Activities) engine(ctx context.Context) (e *fold.Engine, release func(failed bool), err error) {
	p := a.Engines
	if p == nil {
		p = &EnginePool{workDir: a.WorkDir, memory: a.FoldMemory}
	}
	return p.get(ctx, a.keyMapDir())
}

func (p *EnginePool) get(ctx context.Context, keyMaps string) (e *fold.Engine, release func(failed bool), err error) {
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
		dir := filepath.Join(p.workDir, "fold", fmt.Sprintf("engine-%d-%d", os.Getpid(), id))
		if err := os.RemoveAll(dir); err != nil {
			return nil, nil, err
		}
		if e, err = fold.Open(ctx, fold.Options{TempDir: dir, MemoryLimit: p.memory, KeyMapDir: keyMaps}); err != nil {
			return nil, nil, err
		}
	}
	return e, func(failed bool) { p.put(e, failed) }, nil
}

// put returns an engine to the pool, or closes it.
func (p *EnginePool) put(e *fold.Engine, failed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if failed || p.closed || len(p.idle) >= p.maxIdle {
		closeEngine(e)
		return
	}
	p.idle = append(p.idle, e)
}
