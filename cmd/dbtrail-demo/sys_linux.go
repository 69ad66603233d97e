//go:build linux

package main

import "syscall"

// sysProcAttr makes a dbtrail child die with SIGKILL when the demo dies
// (Pdeathsig), and puts it in its own process group so that a terminal's
// Ctrl-C reaches only the demo, which then stops capture with SIGTERM.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
