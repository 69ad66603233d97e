package testsuite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestPersistentS3KeepsItsBucket: a second start over the same folder keeps
// the keys, the bucket and its objects (the demo's object storage).
func TestPersistentS3KeepsItsBucket(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := Install(ctx); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s, err := StartPersistentS3(ctx, dir, port, "demo")
	if err != nil {
		t.Fatal(err)
	}
	key := s.AccessKey
	if _, err := s.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("demo"), Key: aws.String("a"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	s, err = StartPersistentS3(ctx, dir, port, "demo")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if s.AccessKey != key {
		t.Fatal("the root keys changed between runs")
	}
	if _, err := s.Client().HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("demo"), Key: aws.String("a")}); err != nil {
		t.Fatalf("object lost between runs: %v", err)
	}
}
