package storage

import (
	"context"
	"strings"
	"testing"
)

// TestRecordedURL: a location a store gives opens again: a local folder's
// as it is (the same folder), an S3 bucket's with its endpoint in the path
// style, AWS's without an endpoint; anything else is refused naming it.
func TestRecordedURL(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := RecordedURL(s.Location())
	if err != nil {
		t.Fatal(err)
	}
	again, err := Open(context.Background(), u, Options{})
	if err != nil || again.Location() != s.Location() {
		t.Fatalf("reopened %q: %v, %v", u, again, err)
	}
	cfg := S3Config{Bucket: "b", Prefix: "arch/x", Endpoint: "http://127.0.0.1:7070"}
	u, err = RecordedURL((&s3Bucket{cfg: cfg}).location())
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseS3URL(u)
	if err != nil || got.Bucket != "b" || got.Prefix != "arch/x" || got.Endpoint != cfg.Endpoint || !got.PathStyle {
		t.Fatalf("%q parses to %+v, %v", u, got, err)
	}
	if u, err = RecordedURL((&s3Bucket{cfg: S3Config{Bucket: "b", Prefix: "p"}}).location()); err != nil || u != "s3://b/p" {
		t.Fatalf("AWS: %q, %v", u, err)
	}
	for _, bad := range []string{"", "loc", "/srv/x", "s3://b/p", "s3://b/p?credentials-file=/x at http://h", "s3://b/p at ftp://h", "gs://b/p at http://h"} {
		if _, err := RecordedURL(bad); err == nil || !strings.Contains(err.Error(), "recorded location") {
			t.Errorf("RecordedURL(%q): %v", bad, err)
		}
	}
}
