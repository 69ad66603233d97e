package mydumper

import (
	"os"
	"syscall"
)

// childAttr starts mydumper in a process group of its own, so killGroup
// ends it with every process it started (a wrapper script's mydumper holds
// the output pipe: killing the wrapper alone left Do waiting on the pipe),
// and makes it die with SIGKILL when the process that started it dies
// (Pdeathsig): a worker killed mid-dump must not leave a mydumper reading
// the source on its own until it next writes to a closed pipe.
//
// Pdeathsig fires when the OS thread that forked the child exits. The Go
// runtime only ends threads of goroutines that exit while locked to their
// thread, which the goroutines that start mydumper never are.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills p's process group (childAttr made p its leader).
func killGroup(p *os.Process) error {
	return syscall.Kill(-p.Pid, syscall.SIGKILL)
}
