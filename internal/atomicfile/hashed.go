package atomicfile

import (
	"io"
	"os"

	"github.com/dbtrail/dbtrail/internal/digest"
)

// WriteHashed writes path like Write and returns the digest of the bytes
// written: complete under its name with that digest, or not at all.
func WriteHashed(path string, perm os.FileMode, write func(io.Writer) error) (digest.Digest, error) {
	h := digest.NewHasher()
	if err := Write(path, perm, func(w io.Writer) error { return write(io.MultiWriter(w, h)) }); err != nil {
		return digest.Digest{}, err
	}
	return h.Digest(), nil
}
