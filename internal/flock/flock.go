// Package flock holds dbtrail's advisory file locks: one exclusive flock(2)
// on a lock file, created if missing. A lock dies with its process, so a
// killed holder never leaves a stale lock behind; it is advisory, so it
// binds only processes that take it.
package flock

import (
	"context"
	"errors"
	"time"
)

// ErrLocked is returned by TryLock when another holder has the lock.
var ErrLocked = errors.New("locked by another process")

// ErrUnsupported is returned where the system has no flock.
var ErrUnsupported = errors.New("file locks (flock) are not supported on this system")

// pollEvery is how often Lock asks again for a held lock.
const pollEvery = 10 * time.Millisecond

// Lock takes the exclusive lock on path, waiting until it gets it or ctx
// is done. The returned func releases it (once).
func Lock(ctx context.Context, path string) (func(), error) {
	for {
		unlock, err := TryLock(path)
		if !errors.Is(err, ErrLocked) {
			return unlock, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
}
