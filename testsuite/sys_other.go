//go:build !linux

package testsuite

import (
	"errors"
	"syscall"
	"time"
)

// errUnsupported is returned on platforms other than Linux: the harness
// relies on Pdeathsig so that no server outlives the Go process.
var errUnsupported = errors.New("testsuite: real-server harness is supported on Linux only")

func sysProcAttr() *syscall.SysProcAttr { return nil }

// CPUTime is not available off Linux.
func (s *Server) CPUTime() (time.Duration, error) { return 0, errUnsupported }

// CPUTime is not available off Linux.
func (s *S3Server) CPUTime() (time.Duration, error) { return 0, errUnsupported }

// PIDCPUTime is not available off Linux.
func PIDCPUTime(pid int) (time.Duration, error) { return 0, errUnsupported }

// ProcessCPUTime is not available off Linux; it returns 0.
func ProcessCPUTime() time.Duration { return 0 }

// PeakRSS is not available off Linux.
func PeakRSS(pid int) (int64, error) { return 0, errUnsupported }
