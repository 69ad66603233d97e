//go:build unix

package disk

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// Free returns the bytes available to an unprivileged writer in the file
// system holding path (statfs: available blocks times block size). A path
// that does not exist yet is measured at its nearest existing parent.
func Free(path string) (uint64, error) {
	var st unix.Statfs_t
	for p := path; ; {
		err := unix.Statfs(p, &st)
		if err == nil {
			return st.Bavail * uint64(st.Bsize), nil
		}
		parent := parentOf(p)
		if err != unix.ENOENT || parent == p {
			return 0, fmt.Errorf("statfs %s: %w", p, err)
		}
		p = parent
	}
}
