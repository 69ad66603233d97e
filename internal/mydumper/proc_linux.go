package mydumper

import "syscall"

// childAttr makes mydumper die with SIGKILL when the process that started
// it dies (Pdeathsig): a worker killed mid-dump must not leave a mydumper
// reading the source on its own until it next writes to a closed pipe.
//
// Pdeathsig fires when the OS thread that forked the child exits. The Go
// runtime only ends threads of goroutines that exit while locked to their
// thread, which the goroutines that start mydumper never are.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
