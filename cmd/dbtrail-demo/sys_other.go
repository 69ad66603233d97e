//go:build !linux

package main

import "syscall"

// sysProcAttr has nothing to set outside Linux; the demo's servers only run
// on Linux anyway (see testsuite).
func sysProcAttr() *syscall.SysProcAttr { return nil }
