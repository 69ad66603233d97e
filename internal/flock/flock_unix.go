//go:build unix

package flock

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// TryLock takes the exclusive lock on path without waiting: ErrLocked if
// another holder has it. The returned func releases it (once).
func TryLock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	switch {
	case err == nil:
		var once sync.Once
		return func() {
			once.Do(func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			})
		}, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		_ = f.Close()
		return nil, ErrLocked
	default:
		_ = f.Close()
		return nil, fmt.Errorf("flock: %w", err)
	}
}
