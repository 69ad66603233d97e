//go:build linux

package testsuite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// CPUTime is the CPU time (user + system) the server's mariadbd has used so
// far, from /proc/<pid>/stat; benchmarks take the difference of two reads.
func (s *Server) CPUTime() (time.Duration, error) {
	pid, err := os.ReadFile(filepath.Join(s.Dir, "mariadbd.pid"))
	if err != nil {
		return 0, fmt.Errorf("cpu time of %s: %w", s.Addr(), err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(pid)))
	if err != nil {
		return 0, fmt.Errorf("cpu time of %s: pid file: %w", s.Addr(), err)
	}
	d, err := PIDCPUTime(n)
	if err != nil {
		return 0, fmt.Errorf("cpu time of %s: %w", s.Addr(), err)
	}
	return d, nil
}

// CPUTime is the CPU time (user + system) the gateway process has used so
// far; an error when it is not running.
func (s *S3Server) CPUTime() (time.Duration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0, fmt.Errorf("cpu time of versitygw on port %d: not running", s.Port)
	}
	d, err := PIDCPUTime(s.proc.cmd.Process.Pid)
	if err != nil {
		return 0, fmt.Errorf("cpu time of versitygw on port %d: %w", s.Port, err)
	}
	return d, nil
}

// PIDCPUTime is the CPU time (user + system, every thread; not that of
// its children) process pid has used so far, from /proc/<pid>/stat.
// Ticks are taken as 1/100 s, the Linux USER_HZ.
func PIDCPUTime(pid int) (time.Duration, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	str := string(stat)
	f := strings.Fields(str[strings.LastIndexByte(str, ')')+1:]) // fields from 3 (state) on
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc stat of pid %d: %q", pid, str)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64) // utime, field 14
	k, err2 := strconv.ParseInt(f[12], 10, 64) // stime, field 15
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc stat of pid %d: %w", pid, err)
	}
	return time.Duration(u+k) * 10 * time.Millisecond, nil
}

// ProcessCPUTime is the CPU time (user + system) of this process so far.
func ProcessCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PeakRSS is the peak resident set in bytes of process pid's own address
// space (VmHWM of /proc/<pid>/status): unlike the rusage a parent reads,
// it never holds the parent's peak that exec folds into a vfork-started
// child.
func PeakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("peak RSS of process %d: %w", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("peak RSS of process %d: %q: %w", pid, line, err)
			}
			return kib << 10, nil
		}
	}
	return 0, fmt.Errorf("peak RSS of process %d: no VmHWM in its status", pid)
}
