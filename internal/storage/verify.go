package storage

import (
	"context"
	"fmt"
	"io"

	"github.com/dbtrail/dbtrail/internal/digest"
)

// verifyingReader passes body through while hashing it. Where the content
// ends it checks the declared digest: a mismatch is returned instead of
// io.EOF, so a writer that stops at the first error (io.Copy, an upload)
// never finishes a wrong object. Content running past the declared size
// fails at once.
type verifyingReader struct {
	ctx  context.Context
	name string
	r    io.Reader
	want digest.Digest
	h    *digest.Hasher
	err  error // sticky final result
}

func newVerifyingReader(ctx context.Context, name string, r io.Reader, want digest.Digest) *verifyingReader {
	return &verifyingReader{ctx: ctx, name: name, r: r, want: want, h: digest.NewHasher()}
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	if err := v.ctx.Err(); err != nil {
		v.err = err
		return 0, err
	}
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	if v.h.Size() > v.want.Size {
		v.err = &DigestError{Name: v.name, Want: v.want, Got: digest.Digest{Size: v.h.Size()}}
		return 0, v.err
	}
	if err == io.EOF {
		if got := v.h.Digest(); got != v.want {
			v.err = &DigestError{Name: v.name, Want: v.want, Got: got}
			return n, v.err
		}
		v.err = io.EOF
	} else if err != nil {
		v.err = err
	}
	return n, err
}

// readVerified reads all of r, which must be want's content, into memory
// (for small objects sent in one request).
func readVerified(ctx context.Context, name string, r io.Reader, want digest.Digest) ([]byte, error) {
	// One byte of room past the size: the verifying reader fails on
	// content longer than declared and reports a mismatch at the end, so
	// a full read of exactly want.Size bytes is the only success.
	buf := make([]byte, want.Size+1)
	n, err := io.ReadFull(newVerifyingReader(ctx, name, r, want), buf)
	ended := err == io.EOF || err == io.ErrUnexpectedEOF
	if ended && int64(n) == want.Size {
		return buf[:n], nil
	}
	if err == nil || ended {
		return nil, fmt.Errorf("read %d bytes of %d (%v)", n, want.Size, err)
	}
	return nil, err
}
