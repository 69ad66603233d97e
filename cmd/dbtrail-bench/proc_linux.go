//go:build linux

package main

import "syscall"

// childProcAttr makes a child process die with SIGKILL when the benchmark
// dies, so that no worker outlives it.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
