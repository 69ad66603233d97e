package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/dbtrail/dbtrail/internal/digest"
)

// backend is what a store implementation provides. Its methods get names
// already checked (CheckName; checkWritable for put, copy's dst and
// swapPointer; the pointer value and the digest too) and return their
// errors without the operation and name: checked adds those, once.
type backend interface {
	put(ctx context.Context, name string, body io.Reader, d digest.Digest) error
	copy(ctx context.Context, src, dst string) error
	touch(ctx context.Context, name string) error
	stat(ctx context.Context, name string) (Info, error)
	open(ctx context.Context, name string) (io.ReadCloser, error)
	openReaderAt(ctx context.Context, name string) (ReaderAt, error)
	list(ctx context.Context, prefix string, fn func(Info) error) error
	delete(ctx context.Context, name string) error
	readPointer(ctx context.Context, name string) (string, error)
	swapPointer(ctx context.Context, name, old, next string) error
	location() string
}

// checked is the one Store around every backend: it checks names, values
// and digests before the backend sees them, and names the operation and
// object in every error ("put main/x: …"), so each backend keeps only its
// own I/O. An error returned by the caller's List callback is returned as
// it is.
type checked struct{ b backend }

// Put checks name and d, then stores body.
func (c checked) Put(ctx context.Context, name string, body io.Reader, d digest.Digest) error {
	err := checkWritable(name)
	if err == nil {
		err = checkDigest(d)
	}
	if err == nil {
		err = c.b.put(ctx, name, body, d)
	}
	var de *DigestError
	if errors.As(err, &de) {
		err = de // a backend's (or its SDK's) wrapping of it adds nothing
	}
	return wrap(err, "put %s", name)
}

// Copy checks src and dst, then copies.
func (c checked) Copy(ctx context.Context, src, dst string) error {
	err := CheckName(src)
	if err == nil {
		err = checkWritable(dst)
	}
	if err == nil {
		err = c.b.copy(ctx, src, dst)
	}
	return wrap(err, "copy %s to %s", src, dst)
}

// Touch checks name, then makes its ModTime now.
func (c checked) Touch(ctx context.Context, name string) error {
	err := checkWritable(name)
	if err == nil {
		err = c.b.touch(ctx, name)
	}
	return wrap(err, "touch %s", name)
}

// Stat checks name, then stats it.
func (c checked) Stat(ctx context.Context, name string) (Info, error) {
	if err := CheckName(name); err != nil {
		return Info{}, wrap(err, "stat %s", name)
	}
	info, err := c.b.stat(ctx, name)
	return info, wrap(err, "stat %s", name)
}

// Open checks name, then opens it.
func (c checked) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := CheckName(name); err != nil {
		return nil, wrap(err, "open %s", name)
	}
	r, err := c.b.open(ctx, name)
	return r, wrap(err, "open %s", name)
}

// OpenReaderAt checks name, then opens it for ranged reads.
func (c checked) OpenReaderAt(ctx context.Context, name string) (ReaderAt, error) {
	if err := CheckName(name); err != nil {
		return nil, wrap(err, "open %s", name)
	}
	r, err := c.b.openReaderAt(ctx, name)
	return r, wrap(err, "open %s", name)
}

// List checks prefix, then lists; fn's own error comes back unwrapped.
func (c checked) List(ctx context.Context, prefix string, fn func(Info) error) error {
	if err := checkPrefix(prefix); err != nil {
		return wrap(err, "list %q", prefix)
	}
	var fnErr error
	err := c.b.list(ctx, prefix, func(info Info) error {
		fnErr = fn(info)
		return fnErr
	})
	if err != nil && fnErr != nil && errors.Is(err, fnErr) {
		return fnErr
	}
	return wrap(err, "list %q", prefix)
}

// Delete checks name, then deletes it.
func (c checked) Delete(ctx context.Context, name string) error {
	err := CheckName(name)
	if err == nil {
		err = c.b.delete(ctx, name)
	}
	return wrap(err, "delete %s", name)
}

// ReadPointer checks name, then reads the pointer.
func (c checked) ReadPointer(ctx context.Context, name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", wrap(err, "read pointer %s", name)
	}
	v, err := c.b.readPointer(ctx, name)
	return v, wrap(err, "read pointer %s", name)
}

// SwapPointer checks name and next, then swaps.
func (c checked) SwapPointer(ctx context.Context, name, old, next string) error {
	err := checkWritable(name)
	if err == nil {
		err = checkPointerValue(next)
	}
	if err == nil {
		err = c.b.swapPointer(ctx, name, old, next)
	}
	return wrap(err, "swap pointer %s", name)
}

// Location describes the store.
func (c checked) Location() string { return c.b.location() }

// checkPrefix refuses a List prefix no name can start with.
func checkPrefix(prefix string) error {
	if strings.ContainsAny(prefix, "\\\x00") || strings.HasPrefix(prefix, "/") {
		return errors.New("bad prefix")
	}
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		if err := CheckName(prefix[:i]); err != nil {
			return errors.New("bad prefix")
		}
	}
	return nil
}

// wrap names the operation in err; nil stays nil.
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}
