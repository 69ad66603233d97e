// Package storage is where dbtrail keeps snapshots and archives: a flat
// namespace of named objects plus small pointer objects that move by
// compare-and-swap. Two backends implement Store: a local folder (Local) and
// an S3 bucket (S3); Open picks one from a URL (see docs/storage.md).
//
// Names are '/'-separated relative paths ("main/snapshots/20261129T061500Z/
// shop/orders.parquet"): not empty, no empty, "." or ".." element, no
// leading or trailing '/', no '\' or NUL. A final element that starts with
// '.' and ends with ".tmp" or ".lock" is reserved for the backends' own
// temporary and lock files: Put, Copy and SwapPointer refuse it and List
// never reports it.
//
// The contract every backend keeps (the conformance suite in
// internal/storage/storagetest checks each point):
//
//   - Not found: an operation on a name that holds nothing returns an error
//     for which errors.Is(err, fs.ErrNotExist) is true (Stat, Open,
//     OpenReaderAt, Copy's source, ReadPointer). Delete of a missing name
//     succeeds.
//   - Atomicity: a reader sees a whole object or none, never a part; a Put
//     that replaces an object shows the old one until the new one is
//     complete. A failed Put leaves nothing new under its name.
//   - Integrity: Put is given the size and SHA-256 the content must have;
//     content that differs is refused with a *DigestError and nothing is
//     stored under the name.
//   - Idempotency: repeating a Put of the same content, a Copy to the same
//     name, a Delete, or a SwapPointer to the value the pointer already
//     holds, succeeds. On S3 a repeated Put or Copy sends no data (and so
//     makes no new version in a versioned bucket).
//   - Locks: where the bucket's Object Lock retains an object, Delete fails
//     with an error for which errors.Is(err, ErrLocked) is true and the
//     object stays exactly as it was (readers still see it); the caller may
//     report it and carry on, a later Delete after the retention succeeds.
//   - Pointers: ReadPointer and SwapPointer move a small value (such as
//     "snapshots/<id>") from one state to the next; SwapPointer sets it only
//     while it still holds the expected value, so of two concurrent swaps
//     from the same value exactly one wins and the other gets a
//     *PointerMovedError. A pointer is also visible to Stat, Open and List
//     as a small object whose content is its value.
//
// A Store is safe for concurrent use.
package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/digest"
)

// Store is where snapshots and archives live.
type Store interface {
	// Put stores the content body yields under name, replacing any object
	// there. body must yield exactly d.Size bytes whose SHA-256 is d.SHA256;
	// otherwise Put fails with a *DigestError and stores nothing. When name
	// already holds content with digest d, Put may return without reading
	// body.
	Put(ctx context.Context, name string, body io.Reader, d digest.Digest) error
	// Copy makes dst hold the content of the object src without sending
	// the content again (local: a hard link; S3: a server-side copy).
	Copy(ctx context.Context, src, dst string) error
	// Touch makes the object's ModTime now, its content and SHA-256 kept
	// (local: the file's modification time; S3: a copy of the object onto
	// itself). A missing object is an error wrapping fs.ErrNotExist.
	Touch(ctx context.Context, name string) error
	// Stat returns the object's size and, where the backend knows it, its
	// SHA-256.
	Stat(ctx context.Context, name string) (Info, error)
	// Open returns a reader of the whole object. The caller closes it.
	Open(ctx context.Context, name string) (io.ReadCloser, error)
	// OpenReaderAt returns a reader of ranges of the object (Parquet footers
	// are read from the end). ctx bounds every read. The caller closes it.
	OpenReaderAt(ctx context.Context, name string) (ReaderAt, error)
	// List calls fn for every object whose name starts with prefix (a plain
	// string prefix, not a folder), in byte order of names; Info.SHA256 may
	// be empty. An error from fn stops List and is returned.
	List(ctx context.Context, prefix string, fn func(Info) error) error
	// Delete removes the object or pointer name. A missing name is success.
	// An object that Object Lock retains is left as it was and Delete
	// returns an error matching ErrLocked.
	Delete(ctx context.Context, name string) error
	// ReadPointer returns the value of the pointer name.
	ReadPointer(ctx context.Context, name string) (string, error)
	// SwapPointer sets the pointer name to value next, but only while it
	// holds old; old "" means the pointer must not exist yet. If the pointer
	// already holds next, SwapPointer succeeds (a repeated swap). Otherwise
	// a pointer that holds something else fails with a *PointerMovedError.
	SwapPointer(ctx context.Context, name, old, next string) error
	// Location describes the store for logs and errors, without secrets:
	// the folder, or the bucket, prefix and endpoint.
	Location() string
}

// Info describes one stored object.
type Info struct {
	Name    string
	Size    int64
	SHA256  string    // lower-case hex; "" when the backend does not know it
	ModTime time.Time // when the object was last written; zero if unknown
}

// ReaderAt reads ranges of one object. io.NewSectionReader(r, 0, r.Size())
// turns it into the io.ReaderAt plus io.Seeker that Parquet readers take.
type ReaderAt interface {
	io.ReaderAt
	io.Closer
	// Size is the object's size when it was opened.
	Size() int64
}

// ErrLocked is matched (errors.Is) by the error of a Delete that the
// bucket's Object Lock refused.
var ErrLocked = errors.New("object is retained by object lock")

// ErrPointerMoved is matched (errors.Is) by every *PointerMovedError.
var ErrPointerMoved = errors.New("pointer moved")

// swapDue is the rule of a SwapPointer from old to next, given what reading
// the pointer returned (cur, readErr; a missing pointer reads ""): due when
// it holds old and the write is to be done; not due, with a nil error,
// when it holds next already (a repeated swap); not due with readErr, or a
// *PointerMovedError when it holds anything else.
func swapDue(name, cur, old, next string, readErr error) (due bool, err error) {
	if errors.Is(readErr, fs.ErrNotExist) {
		cur, readErr = "", nil
	}
	switch {
	case readErr != nil:
		return false, readErr
	case cur == next:
		return false, nil
	case cur != old:
		return false, &PointerMovedError{Name: name, Want: old, Got: cur}
	}
	return true, nil
}

// PointerMovedError is the error of a SwapPointer whose pointer did not hold
// the expected value.
type PointerMovedError struct {
	Name string
	Want string // the value the swap expected ("" = absent)
	Got  string // the value found ("" = absent)
}

func (e *PointerMovedError) Error() string {
	show := func(v string) string {
		if v == "" {
			return "nothing"
		}
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprintf("pointer %s moved: holds %s, expected %s", e.Name, show(e.Got), show(e.Want))
}

// Is makes errors.Is(err, ErrPointerMoved) true.
func (e *PointerMovedError) Is(target error) bool { return target == ErrPointerMoved }

// DigestError is the error of a Put whose content was not the size or
// SHA-256 it was declared with.
type DigestError struct {
	Name string
	Want digest.Digest
	// Got is what was read: the full digest when the content ended, or
	// only the size read so far (SHA256 "") when it ran past Want.Size.
	Got digest.Digest
}

func (e *DigestError) Error() string {
	if e.Got.SHA256 == "" {
		return fmt.Sprintf("%s: content is longer than the declared %d bytes", e.Name, e.Want.Size)
	}
	return fmt.Sprintf("%s: content is %d bytes with sha256 %s, declared %d bytes with sha256 %s",
		e.Name, e.Got.Size, e.Got.SHA256, e.Want.Size, e.Want.SHA256)
}

// maxPointerLen bounds a pointer's value.
const maxPointerLen = 1024

// CheckName reports whether name is a valid object name (see the package
// doc).
func CheckName(name string) error {
	if name == "" || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") ||
		strings.ContainsAny(name, "\\\x00") || path.Clean(name) != name {
		return fmt.Errorf("bad object name %q", name)
	}
	for _, el := range strings.Split(name, "/") {
		if el == "." || el == ".." {
			return fmt.Errorf("bad object name %q", name)
		}
	}
	return nil
}

// reserved reports whether the last element of name is one of the backends'
// temporary or lock files.
func reserved(name string) bool {
	base := path.Base(name)
	return strings.HasPrefix(base, ".") && (strings.HasSuffix(base, ".tmp") || strings.HasSuffix(base, ".lock"))
}

// checkWritable checks a name a caller writes to.
func checkWritable(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if reserved(name) {
		return fmt.Errorf("object name %q is reserved for temporary and lock files", name)
	}
	return nil
}

// checkDigest checks that d is a plausible digest.
func checkDigest(d digest.Digest) error {
	if d.Size < 0 {
		return fmt.Errorf("bad digest: negative size %d", d.Size)
	}
	if !digest.ValidSHA256(d.SHA256) {
		return fmt.Errorf("bad digest: sha256 %q is not 64 lower-case hex digits", d.SHA256)
	}
	return nil
}

// checkPointerValue checks a value SwapPointer is asked to store.
func checkPointerValue(v string) error {
	if v == "" || len(v) > maxPointerLen || strings.ContainsRune(v, 0) {
		return fmt.Errorf("bad pointer value %q: want 1 to %d bytes without NUL", v, maxPointerLen)
	}
	return nil
}
