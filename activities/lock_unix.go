//go:build unix

package activities

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockPublish takes the source folder's publish lock (flock on
// <sourceDir>/.publish.lock), waiting for another publisher of the same
// source; the returned func releases it. The lock dies with its process.
func lockPublish(sourceDir string) (func(), error) {
	if err := os.MkdirAll(sourceDir, 0o755); err != nil {
		return nil, fmt.Errorf("publish lock: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(sourceDir, ".publish.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("publish lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("publish lock: %w", err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// processAlive reports whether a process with this pid exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
