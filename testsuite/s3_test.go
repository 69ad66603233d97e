package testsuite

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func TestS3KillRestart(t *testing.T) {
	srv := StartS3(t)
	ctx := testCtx(t)
	c := srv.Client()
	put := func() error {
		_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &srv.Bucket, Key: aws.String("a/b"), Body: bytes.NewReader([]byte("kept"))})
		return err
	}
	if err := put(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := put(); err == nil {
		t.Fatal("PutObject succeeded while the server was killed")
	}
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &srv.Bucket, Key: aws.String("a/b")})
	if err != nil {
		t.Fatalf("object lost across restart: %v", err)
	}
	b, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if string(b) != "kept" {
		t.Fatalf("object reads %q after restart", b)
	}
	// A graceful restart works as well.
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := put(); err != nil {
		t.Fatal(err)
	}
	// The keys are in the environment and the credentials file, never in
	// argv.
	for _, a := range srv.args() {
		if strings.Contains(a, srv.SecretKey) || strings.Contains(a, srv.AccessKey) {
			t.Fatalf("a key is on the command line: %q", a)
		}
	}
	creds, err := os.ReadFile(srv.CredentialsFile())
	if err != nil || !strings.Contains(string(creds), srv.SecretKey) {
		t.Fatalf("credentials file: %v", err)
	}
	if st, _ := os.Stat(srv.CredentialsFile()); st.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file mode %v, want 0600", st.Mode().Perm())
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(ctx); err == nil {
		t.Fatal("Restart after Stop succeeded")
	}
	if _, err := os.Stat(srv.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("server folder left after Stop: %v", err)
	}
}

func TestS3ObjectLockBucket(t *testing.T) {
	srv := StartS3With(t, S3Options{ObjectLock: true, RetentionDays: 1, Bucket: "locked"})
	ctx := context.Background()
	c := srv.Client()
	lock, err := c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: &srv.Bucket})
	if err != nil {
		t.Fatal(err)
	}
	rule := lock.ObjectLockConfiguration.Rule
	if lock.ObjectLockConfiguration.ObjectLockEnabled != "Enabled" || rule == nil || rule.DefaultRetention == nil ||
		aws.ToInt32(rule.DefaultRetention.Days) != 1 {
		t.Fatalf("object lock configuration = %+v", lock.ObjectLockConfiguration)
	}
	v, err := c.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: &srv.Bucket})
	if err != nil || v.Status != "Enabled" {
		t.Fatalf("versioning = %v, %v; want Enabled", v.Status, err)
	}
	if err := srv.CreateBucket(ctx, "second", false, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(srv.BucketURL("second", "p"), "s3://second/p?") {
		t.Fatalf("BucketURL = %s", srv.BucketURL("second", "p"))
	}
}
