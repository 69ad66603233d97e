//go:build !unix

package fold

import "os"

// mapFile reads path whole where mmap is unavailable.
func mapFile(path string) ([]byte, func() error, error) {
	data, err := os.ReadFile(path)
	return data, func() error { return nil }, err
}
