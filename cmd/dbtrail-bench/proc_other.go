//go:build !linux

package main

import "syscall"

// childProcAttr is nil off Linux (no Pdeathsig): the benchmark stops its
// children itself.
func childProcAttr() *syscall.SysProcAttr { return nil }

// ownPeakRSS is 0 off Linux: the parent's rusage of the child is used.
func ownPeakRSS() int64 { return 0 }
