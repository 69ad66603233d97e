//go:build !linux

package mydumper

import "syscall"

// childAttr is nil off Linux (no Pdeathsig): a mydumper outlives a killed
// worker there until it next writes to its closed pipe.
func childAttr() *syscall.SysProcAttr { return nil }
