//go:build !linux

package main

import "syscall"

// childProcAttr is nil off Linux (no Pdeathsig): the benchmark stops its
// children itself.
func childProcAttr() *syscall.SysProcAttr { return nil }
