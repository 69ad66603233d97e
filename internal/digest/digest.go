// Package digest is the one description of a file's content dbtrail
// records and checks everywhere (manifests, object storage, exports): its
// sha256 and its size, and the writers and readers that compute them.
package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"os"
)

// Digest is the sha256 (lowercase hex) and size in bytes of a content.
type Digest struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// ValidSHA256 reports whether s is a sha256 as a Digest holds it: 64
// lower-case hex digits.
func ValidSHA256(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Hasher is an io.Writer that hashes and counts what is written through
// it; it never fails.
type Hasher struct {
	h hash.Hash
	n int64
}

// NewHasher returns an empty Hasher.
func NewHasher() *Hasher { return &Hasher{h: sha256.New()} }

// Write hashes and counts p.
func (h *Hasher) Write(p []byte) (int, error) {
	h.n += int64(len(p))
	return h.h.Write(p)
}

// Size is how many bytes were written so far.
func (h *Hasher) Size() int64 { return h.n }

// Digest is the digest of what was written so far.
func (h *Hasher) Digest() Digest {
	return Digest{SHA256: hex.EncodeToString(h.h.Sum(nil)), Size: h.n}
}

// Of reads r to its end and returns the digest of what it read.
func Of(r io.Reader) (Digest, error) {
	h := NewHasher()
	if _, err := io.Copy(h, r); err != nil {
		return Digest{}, err
	}
	return h.Digest(), nil
}

// Bytes returns the digest of b.
func Bytes(b []byte) Digest {
	sum := sha256.Sum256(b)
	return Digest{SHA256: hex.EncodeToString(sum[:]), Size: int64(len(b))}
}

// File returns the digest of the file at path.
func File(path string) (Digest, error) {
	f, err := os.Open(path)
	if err != nil {
		return Digest{}, err
	}
	defer f.Close()
	return Of(f)
}
