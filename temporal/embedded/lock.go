package embedded

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/dbtrail/dbtrail/internal/flock"
)

// lockDir takes an exclusive lock on <dir>/LOCK so that two servers never
// share one SQLite file; the lock goes with the process if it dies. Where
// flock is missing it is a no-op: the frontend port still keeps a second
// server from starting on the default address.
func lockDir(dir string) (unlock func(), err error) {
	path := filepath.Join(dir, "LOCK")
	unlock, err = flock.TryLock(path)
	switch {
	case errors.Is(err, flock.ErrLocked):
		return nil, fmt.Errorf("%s is in use by another dbtrail dev", dir)
	case errors.Is(err, flock.ErrUnsupported):
		return func() {}, nil
	case err != nil:
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return unlock, nil
}
