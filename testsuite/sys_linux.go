//go:build linux

package testsuite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// sysProcAttr makes mariadbd die with SIGKILL when the Go process that
// started it dies (Pdeathsig), and puts it in its own process group so that
// a terminal's Ctrl-C reaches only the Go process, which then stops the
// server gracefully.
//
// Pdeathsig fires when the OS thread that forked the child exits. The Go
// runtime only ends threads of goroutines that exit while locked to their
// thread, which this package never does.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// lockFile takes an exclusive flock on path, creating the file if needed,
// and polls until it gets it or ctx is done. The returned function releases
// the lock.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file %s: %w", path, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
