//go:build !unix

package disk

import "math"

// Free reports unlimited room where statfs is not available.
func Free(string) (uint64, error) { return math.MaxUint64, nil }
