package storage_test

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/internal/storage/storagetest"
	"github.com/dbtrail/dbtrail/testsuite"
)

func TestS3Conformance(t *testing.T) {
	srv := testsuite.StartS3(t)
	storagetest.Run(t, s3Harness(t, srv, false))
}

func TestS3ObjectLockConformance(t *testing.T) {
	srv := testsuite.StartS3With(t, testsuite.S3Options{ObjectLock: true, RetentionDays: 1})
	storagetest.Run(t, s3Harness(t, srv, true))
}

// s3Harness opens each test's store under its own prefix of the server's
// bucket, through an HTTP client that counts the bytes sent.
func s3Harness(t *testing.T, srv *testsuite.S3Server, retains bool) storagetest.Harness {
	var sent atomic.Int64
	client := &http.Client{Transport: countingTransport{http.DefaultTransport, &sent}}
	var n atomic.Int64
	return storagetest.Harness{
		New: func(t *testing.T) storage.Store {
			prefix := fmt.Sprintf("t%03d/%s", n.Add(1), strings.ReplaceAll(t.Name(), "/", "-"))
			s, err := storage.Open(testCtx(t), srv.URL(prefix), storage.Options{HTTPClient: client})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Retains: retains,
		Sent:    sent.Load,
	}
}

// countingTransport adds the bytes of every request body to n.
type countingTransport struct {
	rt http.RoundTripper
	n  *atomic.Int64
}

func (c countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body = countingBody{req.Body, c.n}
	}
	return c.rt.RoundTrip(req)
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// TestS3OpenFails checks that a missing bucket, wrong keys and a dead
// endpoint fail at Open, naming the bucket and the endpoint.
func TestS3OpenFails(t *testing.T) {
	srv := testsuite.StartS3(t)
	ctx := testCtx(t)
	wrongKeys := filepath.Join(t.TempDir(), "credentials")
	writeFile(t, wrongKeys, "[default]\naws_access_key_id = nobody\naws_secret_access_key = wrongwrongwrong\n")
	wrongSecret := filepath.Join(t.TempDir(), "credentials")
	writeFile(t, wrongSecret, "[default]\naws_access_key_id = "+srv.AccessKey+"\naws_secret_access_key = wrongwrongwrong\n")
	dead := "http://127.0.0.1:1" // nothing listens on port 1
	cases := []struct {
		what, url string
		want      []string
	}{
		{"missing bucket", srv.BucketURL("no-such-bucket", "p"),
			[]string{`"no-such-bucket"`, srv.Endpoint, "does not exist"}},
		{"wrong keys", strings.Replace(srv.URL("p"), "credentials-file="+urlEscape(srv.CredentialsFile()), "credentials-file="+urlEscape(wrongKeys), 1),
			[]string{`"` + srv.Bucket + `"`, srv.Endpoint, "access denied"}},
		{"wrong secret", strings.Replace(srv.URL("p"), "credentials-file="+urlEscape(srv.CredentialsFile()), "credentials-file="+urlEscape(wrongSecret), 1),
			[]string{`"` + srv.Bucket + `"`, srv.Endpoint, "access denied"}},
		{"dead endpoint", strings.Replace(srv.URL("p"), urlEscape(srv.Endpoint), urlEscape(dead), 1),
			[]string{`"` + srv.Bucket + `"`, dead}},
		{"missing credentials file", strings.Replace(srv.URL("p"), urlEscape(srv.CredentialsFile()), urlEscape("/nonexistent/creds"), 1),
			[]string{`"` + srv.Bucket + `"`, "/nonexistent/creds"}},
	}
	for _, c := range cases {
		_, err := storage.Open(ctx, c.url, storage.Options{})
		if err == nil {
			t.Fatalf("%s: Open succeeded", c.what)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", c.what, err, w)
			}
		}
		t.Logf("%s: %v", c.what, err)
	}
}

func urlEscape(s string) string {
	return strings.NewReplacer(":", "%3A", "/", "%2F").Replace(s)
}
