// Package disk checks for room before a step writes: a step estimates
// the bytes it will write and Check refuses it at once, naming the folder,
// the need and what is free, instead of failing at the end of a long write
// with "no space left on device".
package disk

import (
	"fmt"
)

// Probe returns the bytes an unprivileged writer can still write in the
// file system holding path. Free is the real one; tests inject others.
type Probe func(path string) (uint64, error)

// LowSpace is the free space under which a folder is low (256 MiB).
// `dbtrail status --folder` marks such a folder LOW and the worker logs a
// warning when one falls below it.
const LowSpace = 256 << 20

// Low reports whether free bytes is low (under LowSpace).
func Low(free uint64) bool { return free < LowSpace }

// NoSpaceError is a step refused for want of room: it needs about Need
// bytes (its estimate, package room) in Path, which has Free.
type NoSpaceError struct {
	Path       string
	Need, Free uint64
	// What is the step, e.g. "rewrite shop.orders".
	What string
}

func (e *NoSpaceError) Error() string {
	return fmt.Sprintf("%s needs about %s in %s (%s free)", e.What, Bytes(e.Need), e.Path, Bytes(e.Free))
}

// Check returns a *NoSpaceError when path has less than need bytes free
// (need is an estimate with its margin, package room, or an exact size);
// an error of the probe is returned wrapped.
func Check(probe Probe, path string, need uint64, what string) error {
	if probe == nil {
		probe = Free
	}
	free, err := probe(path)
	if err != nil {
		return fmt.Errorf("free space of %s: %w", path, err)
	}
	if free < need {
		return &NoSpaceError{Path: path, Need: need, Free: free, What: what}
	}
	return nil
}

// Bytes is n in binary units with one decimal: 512 B, 1.5 KiB, 2.1 GiB.
func Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
