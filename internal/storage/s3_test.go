package storage

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/testsuite"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// openS3 opens prefix of the server's bucket with an optional HTTP client.
func openS3(t *testing.T, srv *testsuite.S3Server, prefix string, client *http.Client) *S3 {
	t.Helper()
	cfg, err := ParseS3URL(srv.URL(prefix))
	if err != nil {
		t.Fatal(err)
	}
	cfg.HTTPClient = client
	s, err := NewS3(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// headerRecorder keeps the method, path and headers of every request.
type headerRecorder struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (h *headerRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.reqs = append(h.reqs, req.Clone(context.Background()))
	h.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

// TestS3Checksums checks that every request that uploads a body (PutObject,
// UploadPart) carries a SHA-256 checksum, as an Object Lock bucket demands,
// and that Stat knows the SHA-256 of single and multipart uploads.
func TestS3Checksums(t *testing.T) {
	srv := testsuite.StartS3With(t, testsuite.S3Options{ObjectLock: true, RetentionDays: 1})
	rec := &headerRecorder{}
	s := openS3(t, srv, "sums", &http.Client{Transport: rec})
	ctx := testCtx(t)
	small, ds := content(1000, 1)
	large, dl := content(2*DefaultPartSize+5, 2)
	for name, c := range map[string]struct {
		b []byte
		d digest.Digest
	}{"small": {small, ds}, "large": {large, dl}} {
		if err := s.Put(ctx, name, bytes.NewReader(c.b), c.d); err != nil {
			t.Fatal(err)
		}
		info, err := s.Stat(ctx, name)
		if err != nil || info.SHA256 != c.d.SHA256 || info.Size != c.d.Size {
			t.Fatalf("Stat %s = %+v, %v; want %+v", name, info, err, c.d)
		}
	}
	if err := s.SwapPointer(ctx, "current", "", "snapshots/x"); err != nil {
		t.Fatal(err)
	}
	puts := 0
	for _, r := range rec.reqs {
		if r.Method != http.MethodPut || r.Header.Get("X-Amz-Copy-Source") != "" || r.URL.Query().Has("uploadId") && !r.URL.Query().Has("partNumber") {
			continue
		}
		puts++
		sum := r.Header.Get("X-Amz-Checksum-Sha256") != "" ||
			strings.Contains(strings.ToLower(r.Header.Get("X-Amz-Trailer")), "x-amz-checksum-sha256")
		if !sum {
			t.Errorf("PUT %s without a SHA-256 checksum (headers %v)", r.URL.Path, r.Header)
		}
	}
	if puts < 5 { // small, three parts of large, the pointer
		t.Fatalf("saw %d uploading PUTs, want at least 5", puts)
	}
}

// TestS3CopyParts lowers the CopyObject limit to copy in parts
// (UploadPartCopy), as objects above 5 GiB are.
func TestS3CopyParts(t *testing.T) {
	srv := testsuite.StartS3(t)
	s := openS3(t, srv, "copy", nil)
	s.maxCopySize, s.copyPartSize = 6<<20, 5<<20
	ctx := testCtx(t)
	b, d := content(12<<20+3, 3)
	if err := s.Put(ctx, "src", bytes.NewReader(b), d); err != nil {
		t.Fatal(err)
	}
	if err := s.Copy(ctx, "src", "dst"); err != nil {
		t.Fatal(err)
	}
	info, err := s.Stat(ctx, "dst")
	if err != nil || info.Size != d.Size || info.SHA256 != d.SHA256 {
		t.Fatalf("Stat of the copy = %+v, %v; want %+v", info, err, d)
	}
	r, err := s.Open(ctx, "dst")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	got.ReadFrom(r)
	r.Close()
	if !bytes.Equal(got.Bytes(), b) {
		t.Fatal("copy in parts differs from its source")
	}
	out, err := s.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &s.cfg.Bucket})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Uploads) != 0 {
		t.Fatalf("%d multipart uploads left open", len(out.Uploads))
	}
}

// versionsOf lists the version ids of a name.
func versionsOf(t *testing.T, s *S3, name string) []string {
	t.Helper()
	vs, err := s.versions(testCtx(t), s.key(name))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, v := range vs {
		ids = append(ids, aws.ToString(v.id))
	}
	return ids
}

// TestS3VersionedDelete checks Delete in a versioned bucket: every version
// goes, oldest first, and a retained version stops it without ever showing
// an older content.
func TestS3VersionedDelete(t *testing.T) {
	srv := testsuite.StartS3With(t, testsuite.S3Options{ObjectLock: true}) // no default retention
	s := openS3(t, srv, "del", nil)
	if !s.Versioned() || !s.ObjectLock() {
		t.Fatalf("bucket versioned %v, object lock %v; want both", s.Versioned(), s.ObjectLock())
	}
	ctx := testCtx(t)
	put := func(name string, fill byte) []byte {
		b, d := content(100, fill)
		if err := s.Put(ctx, name, bytes.NewReader(b), d); err != nil {
			t.Fatal(err)
		}
		return b
	}
	read := func(name string) []byte {
		r, err := s.Open(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var buf bytes.Buffer
		buf.ReadFrom(r)
		return buf.Bytes()
	}
	retain := func(name, version string) {
		_, err := s.client.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{
			Bucket: &s.cfg.Bucket, Key: aws.String(s.key(name)), VersionId: aws.String(version),
			Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance,
				RetainUntilDate: aws.Time(time.Now().Add(24 * time.Hour))},
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	// Unretained: every version goes.
	put("free", 1)
	put("free", 2)
	put("free", 3)
	put("free", 3) // the same content again: no new version
	if n := len(versionsOf(t, s, "free")); n != 3 {
		t.Fatalf("%d versions of free, want 3", n)
	}
	if err := s.Copy(ctx, "free", "free-copy"); err != nil {
		t.Fatal(err)
	}
	if err := s.Copy(ctx, "free", "free-copy"); err != nil {
		t.Fatal(err)
	}
	if n := len(versionsOf(t, s, "free-copy")); n != 1 {
		t.Fatalf("%d versions of a copy made twice, want 1", n)
	}
	if err := s.Delete(ctx, "free"); err != nil {
		t.Fatal(err)
	}
	if vs := versionsOf(t, s, "free"); len(vs) != 0 {
		t.Fatalf("versions left after Delete: %v", vs)
	}

	// The newest version retained: the older ones go, the object stays
	// as it was.
	put("newest", 1)
	latest := put("newest", 2)
	vs := versionsOf(t, s, "newest")
	retain("newest", vs[len(vs)-1])
	if err := s.Delete(ctx, "newest"); !errors.Is(err, ErrLocked) {
		t.Fatalf("Delete with the newest version retained: %v, want ErrLocked", err)
	}
	if got := versionsOf(t, s, "newest"); len(got) != 1 || got[0] != vs[1] {
		t.Fatalf("versions after Delete = %v, want only %s", got, vs[1])
	}
	if !bytes.Equal(read("newest"), latest) {
		t.Fatal("the object changed content")
	}

	// The oldest version retained: nothing goes (removing the newer one
	// would show the older content).
	put("oldest", 1)
	latest = put("oldest", 2)
	vs = versionsOf(t, s, "oldest")
	retain("oldest", vs[0])
	if err := s.Delete(ctx, "oldest"); !errors.Is(err, ErrLocked) {
		t.Fatalf("Delete with the oldest version retained: %v, want ErrLocked", err)
	}
	if got := versionsOf(t, s, "oldest"); len(got) != 2 {
		t.Fatalf("versions after Delete = %v, want both", got)
	}
	if !bytes.Equal(read("oldest"), latest) {
		t.Fatal("the object changed content")
	}
}

// TestS3RefusedUploadAborted checks that a multipart upload whose content
// does not match its digest is aborted: no upload stays open, no object
// appears.
func TestS3RefusedUploadAborted(t *testing.T) {
	srv := testsuite.StartS3(t)
	s := openS3(t, srv, "abort", nil)
	ctx := testCtx(t)
	b, d := content(3*DefaultPartSize, 4)
	b[len(b)/2] ^= 1
	err := s.Put(ctx, "x", bytes.NewReader(b), d)
	var de *DigestError
	if !errors.As(err, &de) {
		t.Fatalf("Put = %v, want a *DigestError", err)
	}
	out, err := s.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &s.cfg.Bucket})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Uploads) != 0 {
		t.Fatalf("%d multipart uploads left open", len(out.Uploads))
	}
	if _, err := s.Stat(ctx, "x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat after a refused upload: %v", err)
	}
}

// TestS3ConditionalWrites checks what SwapPointer relies on: the server
// refuses a PutObject whose If-Match names an ETag the object no longer
// has, and one with If-None-Match: * on an existing object (versitygw
// v1.8.0 does both, with 412).
func TestS3ConditionalWrites(t *testing.T) {
	srv := testsuite.StartS3(t)
	s := openS3(t, srv, "cond", nil)
	ctx := testCtx(t)
	if err := s.SwapPointer(ctx, "current", "", "snapshots/1"); err != nil {
		t.Fatal(err)
	}
	_, stale, err := s.readPointerTag(ctx, "current")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SwapPointer(ctx, "current", "snapshots/1", "snapshots/2"); err != nil {
		t.Fatal(err)
	}
	write := func(cond func(*s3.PutObjectInput)) error {
		in := &s3.PutObjectInput{Bucket: &s.cfg.Bucket, Key: aws.String(s.key("current")),
			Body: bytes.NewReader([]byte("snapshots/3"))}
		cond(in)
		_, err := s.client.PutObject(ctx, in)
		return err
	}
	err = write(func(in *s3.PutObjectInput) { in.IfMatch = stale })
	if httpStatus(err) != http.StatusPreconditionFailed {
		t.Fatalf("PutObject If-Match on a stale ETag: %v, want 412", err)
	}
	err = write(func(in *s3.PutObjectInput) { in.IfNoneMatch = aws.String("*") })
	if httpStatus(err) != http.StatusPreconditionFailed {
		t.Fatalf("PutObject If-None-Match: * on an existing object: %v, want 412", err)
	}
	if v, err := s.ReadPointer(ctx, "current"); err != nil || v != "snapshots/2" {
		t.Fatalf("pointer = %q, %v after refused writes; want snapshots/2", v, err)
	}
}
