//go:build !linux

package testsuite

import (
	"context"
	"errors"
	"syscall"
)

// errUnsupported is returned on platforms other than Linux: the harness
// relies on Pdeathsig so that no server outlives the Go process.
var errUnsupported = errors.New("testsuite: real-server harness is supported on Linux only")

func sysProcAttr() *syscall.SysProcAttr { return nil }

func lockFile(ctx context.Context, path string) (func(), error) {
	return nil, errUnsupported
}
