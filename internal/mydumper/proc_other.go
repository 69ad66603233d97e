//go:build !linux

package mydumper

import (
	"os"
	"syscall"
)

// childAttr is nil off Linux (no Pdeathsig, no process group): a mydumper
// outlives a killed worker there until it next writes to its closed pipe.
func childAttr() *syscall.SysProcAttr { return nil }

// killGroup kills p alone off Linux; Run.once's WaitDelay bounds the wait
// for the pipes a child of p may still hold.
func killGroup(p *os.Process) error { return p.Kill() }
