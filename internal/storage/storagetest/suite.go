// Package storagetest is the conformance suite of storage.Store: Run checks
// every point of the contract in the storage package doc against one
// backend. Each backend's tests call Run with a constructor of fresh,
// empty stores.
package storagetest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// Harness describes the backend under test.
type Harness struct {
	// New returns a new, empty store for one test (a fresh folder or key
	// prefix).
	New func(t *testing.T) storage.Store
	// Retains says that the backend retains every object it writes (an
	// Object Lock bucket with a default retention): Delete of an existing
	// object must then fail with storage.ErrLocked and leave it readable.
	Retains bool
	// Sent returns the bytes of request bodies sent to the backend so far,
	// or is nil where that is not measured. Copy must send far less than
	// the object.
	Sent func() int64
}

// LargeSize is the size of the suite's multipart objects: above the S3
// backend's default part size, so they go up in several parts.
const LargeSize = 40 << 20

// Run runs every conformance test as a subtest of t.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"RoundTrip", testRoundTrip},
		{"Empty", testEmpty},
		{"DigestMismatch", testDigestMismatch},
		{"IdempotentPut", testIdempotentPut},
		{"Replace", testReplace},
		{"Copy", testCopy},
		{"Touch", testTouch},
		{"List", testList},
		{"NotFound", testNotFound},
		{"Delete", testDelete},
		{"Pointer", testPointer},
		{"Multipart", testMultipart},
		{"MultipartMismatch", testMultipartMismatch},
		{"ConcurrentSwap", testConcurrentSwap},
		{"Names", testNames},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, h) })
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Content returns n pseudo-random bytes (from seed) and their digest.
func Content(seed uint64, n int) ([]byte, digest.Digest) {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24)})
	r.Read(b)
	return b, digest.Bytes(b)
}

func put(t *testing.T, ctx context.Context, s storage.Store, name string, b []byte) digest.Digest {
	t.Helper()
	d := digest.Bytes(b)
	if err := s.Put(ctx, name, bytes.NewReader(b), d); err != nil {
		t.Fatalf("Put %s: %v", name, err)
	}
	return d
}

func readAll(t *testing.T, ctx context.Context, s storage.Store, name string) []byte {
	t.Helper()
	r, err := s.Open(ctx, name)
	if err != nil {
		t.Fatalf("Open %s: %v", name, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return b
}

func checkStat(t *testing.T, ctx context.Context, s storage.Store, name string, d digest.Digest) {
	t.Helper()
	info, err := s.Stat(ctx, name)
	if err != nil {
		t.Fatalf("Stat %s: %v", name, err)
	}
	if info.Name != name || info.Size != d.Size {
		t.Errorf("Stat %s = name %q size %d, want size %d", name, info.Name, info.Size, d.Size)
	}
	if info.SHA256 != "" && info.SHA256 != d.SHA256 {
		t.Errorf("Stat %s sha256 = %s, want %s", name, info.SHA256, d.SHA256)
	}
}

func wantNotExist(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: err = %v, want one matching fs.ErrNotExist", what, err)
	}
}

func testRoundTrip(t *testing.T, h Harness) {
	ctx, s := testCtx(t), h.New(t)
	b, _ := Content(1, 300_000)
	name := "main/snapshots/20261129T061500Z/shop/orders.parquet"
	d := put(t, ctx, s, name, b)
	checkStat(t, ctx, s, name, d)
	if got := readAll(t, ctx, s, name); !bytes.Equal(got, b) {
		t.Fatalf("Open read %d bytes, not the %d put", len(got), len(b))
	}
	ra, err := s.OpenReaderAt(ctx, name)
	if err != nil {
		t.Fatalf("OpenReaderAt: %v", err)
	}
	defer ra.Close()
	if ra.Size() != d.Size {
		t.Fatalf("ReaderAt size = %d, want %d", ra.Size(), d.Size)
	}
	for _, c := range []struct{ off, n int }{{0, 10}, {123_456, 4096}, {len(b) - 8, 8}, {len(b) - 1, 1}} {
		p := make([]byte, c.n)
		n, err := ra.ReadAt(p, int64(c.off))
		if err != nil && !(err == io.EOF && c.off+c.n == len(b)) {
			t.Fatalf("ReadAt(%d, %d): %v", c.off, c.n, err)
		}
		if n != c.n || !bytes.Equal(p, b[c.off:c.off+c.n]) {
			t.Fatalf("ReadAt(%d, %d) = %d bytes, not the object's", c.off, c.n, n)
		}
	}
	// Reading past the end returns what is there and io.EOF.
	p := make([]byte, 100)
	n, err := ra.ReadAt(p, int64(len(b)-10))
	if n != 10 || err != io.EOF || !bytes.Equal(p[:n], b[len(b)-10:]) {
		t.Fatalf("ReadAt across the end = %d, %v; want 10, io.EOF", n, err)
	}
	if n, err := ra.ReadAt(p, int64(len(b))); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt at the end = %d, %v; want 0, io.EOF", n, err)
	}
	// A section reader over it is what Parquet readers take.
	sr := io.NewSectionReader(ra, 0, ra.Size())
	if _, err := sr.Seek(-4, io.SeekEnd); err != nil {
		t.Fatal(err)
	}
	tail, err := io.ReadAll(sr)
	if err != nil || !bytes.Equal(tail, b[len(b)-4:]) {
		t.Fatalf("section reader tail = %x, %v", tail, err)
	}
}

func testEmpty(t *testing.T, h Harness) {
	ctx, s := testCtx(t), h.New(t)
	d := put(t, ctx, s, "empty", nil)
	checkStat(t, ctx, s, "empty", d)
	if got := readAll(t, ctx, s, "empty"); len(got) != 0 {
		t.Fatalf("empty object read %d bytes", len(got))
	}
	ra, err := s.OpenReaderAt(ctx, "empty")
	if err != nil {
		t.Fatal(err)
	}
	defer ra.Close()
	if n, err := ra.ReadAt(make([]byte, 1), 0); ra.Size() != 0 || n != 0 || err != io.EOF {
		t.Fatalf("empty ReaderAt: size %d, ReadAt = %d, %v", ra.Size(), n, err)
	}
}

func testDigestMismatch(t *testing.T, h Harness) {
	ctx, s := testCtx(t), h.New(t)
	b, d := Content(2, 10_000)
	other := digest.Bytes([]byte("something else"))
	cases := []struct {
		what string
		body []byte
		d    digest.Digest
	}{
		{"wrong sha256", b, digest.Digest{SHA256: other.SHA256, Size: d.Size}},
		{"shorter than declared", b[:len(b)-1], d},
		{"longer than declared", append(append([]byte(nil), b...), 0), d},
	}
	for _, c := range cases {
		err := s.Put(ctx, "bad", bytes.NewReader(c.body), c.d)
		var de *storage.DigestError
		if !errors.As(err, &de) {
			t.Fatalf("Put with %s: err = %v, want a *storage.DigestError", c.what, err)
		}
		_, err = s.Stat(ctx, "bad")
		wantNotExist(t, "Stat after Put with "+c.what, err)
	}
	// A refused replacement leaves the old object as it was.
	put(t, ctx, s, "kept", b)
	err := s.Put(ctx, "kept", bytes.NewReader([]byte("new content")), digest.Digest{SHA256: other.SHA256, Size: 11})
	if err == nil {
		t.Fatal("Put with a wrong digest over an object succeeded")
	}
	if got := readAll(t, ctx, s, "kept"); !bytes.Equal(got, b) {
		t.Fatal("a refused Put changed the object it would replace")
	}
	checkList(t, ctx, s, "", "kept")
}

func testIdempotentPut(t *testing.T, h Harness) {
	ctx, s := testCtx(t), h.New(t)
	b, d := Content(3, 50_000)
	for i := 0; i < 3; i++ {
		if err := s.Put(ctx, "a/x", bytes.NewReader(b), d); err != nil {
			t.Fatalf("Put #%d: %v", i+1, err)
		}
	}
	checkStat(t, ctx, s, "a/x", d)
	if got := readAll(t, ctx, s, "a/x"); !bytes.Equal(got, b) {
		t.Fatal("content changed by repeated Puts")
	}
}

func testReplace(t *testing.T, h Harness) {
	ctx, s := testCtx(t), h.New(t)
	put(t, ctx, s, "r", []byte("first"))
	d := put(t, ctx, s, "r", []byte("second, longer"))
	checkStat(t, ctx, s, "r", d)
	if got := readAll(t, ctx, s, "r"); string(got) != "second, longer" {
		t.Fatalf("after replace read %q", got)
	}
}

func testCopy(t *testing.T, h Harness) {
	ctx, s := testCtx(t), h.New(t)
	b, _ := Content(4, 2<<20)
	d := put(t, ctx, s, "snapshots/1/t.parquet", b)
	var before int64
	if h.Sent != nil {
		before = h.Sent()
	}
	if err := s.Copy(ctx, "snapshots/1/t.parquet", "snapshots/2/t.parquet"); err != nil {
		t.Fatalf("Copy: %v", err)
	}
	if h.Sent != nil {
		if sent := h.Sent() - before; sent > d.Size/16 {
			t.Errorf("Copy sent %d bytes for an object of %d: the content went up again", sent, d.Size)
		}
	}
	checkStat(t, ctx, s, "snapshots/2/t.parquet", d)
	if got := readAll(t, ctx, s, "snapshots/2/t.parquet"); !bytes.Equal(got, b) {
		t.Fatal("copy differs from its source")
	}
	if err := s.Copy(ctx, "snapshots/1/t.parquet", "snapshots/2/t.parquet"); err != nil {
		t.Fatalf("repeated Copy: %v", err)
	}
	// Copy over an object with other content replaces it.
	put(t, ctx, s, "other", []byte("other"))
	if err := s.Copy(ctx, "snapshots/1/t.parquet", "other"); err != nil {
		t.Fatalf("Copy over another object: %v", err)
	}
	checkStat(t, ctx, s, "other", d)
	// The source is untouched.
	if got := readAll(t, ctx, s, "snapshots/1/t.parquet"); !bytes.Equal(got, b) {
		t.Fatal("Copy changed its source")
	}
	err := s.Copy(ctx, "missing", "dst")
	wantNotExist(t, "Copy of a missing source", err)
	_, err = s.Stat(ctx, "dst")
	wantNotExist(t, "Stat of the destination of a failed Copy", err)
}

// testTouch checks that Touch keeps the object's content and digest, never
// makes its ModTime older, and refuses a missing object.
func testTouch(t *testing.T, h Harness) {
	ctx, s := testCtx(t), h.New(t)
	b, _ := Content(5, 100_000)
	d := put(t, ctx, s, "objects/ab/x", b)
	before, err := s.Stat(ctx, "objects/ab/x")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Touch(ctx, "objects/ab/x"); err != nil {
		t.Fatalf("Touch: %v", err)
	}
	after, err := s.Stat(ctx, "objects/ab/x")
	if err != nil {
		t.Fatal(err)
	}
	checkStat(t, ctx, s, "objects/ab/x", d)
	if before.SHA256 != after.SHA256 {
		t.Errorf("Touch changed the recorded sha256 from %q to %q", before.SHA256, after.SHA256)
	}
	if after.ModTime.Before(before.ModTime) {
		t.Errorf("Touch made ModTime older: %v, was %v", after.ModTime, before.ModTime)
	}
	if got := readAll(t, ctx, s, "objects/ab/x"); !bytes.Equal(got, b) {
		t.Fatal("Touch changed the content")
	}
	wantNotExist(t, "Touch of a missing object", s.Touch(ctx, "objects/ab/missing"))
}

func checkList(t *testing.T, ctx context.Context, s storage.Store, prefix string, want ...string) []storage.Info {
	t.Helper()
	var got []string
	var infos []storage.Info
	err := s.List(ctx, prefix, func(i storage.Info) error {
		got = append(got, i.Name)
		infos = append(infos, i)
		return nil
	})
	if err != nil {
		t.Fatalf("List %q: %v", prefix, err)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("List %q = %q, want %q", prefix, got, want)
	}
	return infos
}

func testList(t *testing.T, h Harness) {
	ctx, s := testCtx(t), h.New(t)
	names := []string{"b/1", "a/2", "ab", "a/b/3", "a.b", "a/1", ".staging/x/y"}
	sizes := map[string]int64{}
	for i, n := range names {
		b, _ := Content(uint64(10+i), 100+i)
		put(t, ctx, s, n, b)
		sizes[n] = int64(len(b))
	}
	all := checkList(t, ctx, s, "", ".staging/x/y", "a.b", "a/1", "a/2", "a/b/3", "ab", "b/1")
	for _, i := range all {
		if i.Size != sizes[i.Name] {
			t.Errorf("List size of %s = %d, want %d", i.Name, i.Size, sizes[i.Name])
		}
	}
	checkList(t, ctx, s, "a/", "a/1", "a/2", "a/b/3")
	checkList(t, ctx, s, "a", "a.b", "a/1", "a/2", "a/b/3", "ab")
	checkList(t, ctx, s, "a/b", "a/b/3")
	checkList(t, ctx, s, "a/b/3", "a/b/3")
	checkList(t, ctx, s, "c")
	checkList(t, ctx, s, "nothing/here/")
	stop := errors.New("stop")
	n := 0
	err := s.List(ctx, "", func(storage.Info) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("List with fn failing: err %v after %d calls, want stop after 1", err, n)
	}
}

func testNotFound(t *testing.T, h Harness) {
	ctx, s := testCtx(t), h.New(t)
	put(t, ctx, s, "dir/present", []byte("x"))
	for _, name := range []string{"missing", "dir/missing", "dir"} {
		_, err := s.Stat(ctx, name)
		wantNotExist(t, "Stat "+name, err)
		_, err = s.Open(ctx, name)
		wantNotExist(t, "Open "+name, err)
		_, err = s.OpenReaderAt(ctx, name)
		wantNotExist(t, "OpenReaderAt "+name, err)
		_, err = s.ReadPointer(ctx, name)
		wantNotExist(t, "ReadPointer "+name, err)
	}
}

func testDelete(t *testing.T, h Harness) {
	ctx, s := testCtx(t), h.New(t)
	if err := s.Delete(ctx, "never/was"); err != nil {
		t.Fatalf("Delete of a missing object: %v", err)
	}
	b, d := Content(5, 1000)
	put(t, ctx, s, "x/y", b)
	put(t, ctx, s, "x/z", b)
	err := s.Delete(ctx, "x/y")
	if h.Retains {
		if !errors.Is(err, storage.ErrLocked) {
			t.Fatalf("Delete of a retained object: err = %v, want ErrLocked", err)
		}
		checkStat(t, ctx, s, "x/y", d)
		if got := readAll(t, ctx, s, "x/y"); !bytes.Equal(got, b) {
			t.Fatal("a refused Delete changed the object")
		}
		checkList(t, ctx, s, "x/", "x/y", "x/z")
		return
	}
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}
	_, err = s.Stat(ctx, "x/y")
	wantNotExist(t, "Stat after Delete", err)
	if err := s.Delete(ctx, "x/y"); err != nil {
		t.Fatalf("repeated Delete: %v", err)
	}
	checkList(t, ctx, s, "x/", "x/z")
	// A name can be written again after Delete.
	put(t, ctx, s, "x/y", []byte("again"))
	if got := readAll(t, ctx, s, "x/y"); string(got) != "again" {
		t.Fatalf("after Delete and Put read %q", got)
	}
}

func testNames(t *testing.T, h Harness) {
	ctx, s := testCtx(t), h.New(t)
	b, d := Content(9, 10)
	for _, name := range []string{"", "/abs", "a//b", "a/", "../up", "a/../b", "./a", "a\\b", "x/.y.tmp", ".z.lock"} {
		if err := s.Put(ctx, name, bytes.NewReader(b), d); err == nil {
			t.Errorf("Put %q succeeded", name)
		}
	}
	checkList(t, ctx, s, "")
}
