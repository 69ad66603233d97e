//go:build !unix

package flock

// TryLock fails where flock is unavailable.
func TryLock(string) (func(), error) { return nil, ErrUnsupported }
