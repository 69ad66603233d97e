package testsuite

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// StartS3 starts an S3 server (versitygw) for the test with a plain bucket
// "dbtrail", its folder under t.TempDir(), and stops it in t.Cleanup.
func StartS3(t testing.TB) *S3Server {
	t.Helper()
	return StartS3With(t, S3Options{})
}

// StartS3With runs Install, then StartS3Server with opts (Dir defaults to
// t.TempDir(), or to os.TempDir() under DBTRAIL_KEEP_DATADIR=1), registers
// Stop with t.Cleanup and logs the endpoint.
//
// When versitygw cannot be found even after Install, the test fails if CI
// is set (InCI: CI=true, as .ci/run sets it) and is skipped otherwise, so that a
// machine without the Go module proxy can still run the other tests. Any
// other failure is a t.Fatalf.
func StartS3With(t testing.TB, opts S3Options) *S3Server {
	t.Helper()
	ictx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	ierr := Install(ictx)
	if _, err := FindVersityGW(ictx); err != nil {
		if ierr != nil {
			err = fmt.Errorf("%w; install: %v", err, ierr)
		}
		if InCI() {
			t.Fatalf("testsuite: %v", err)
		}
		t.Skipf("testsuite: %v (with CI=true this fails the test)", err)
	}
	if ierr != nil {
		t.Logf("testsuite: install failed, versitygw present, going on: %v", ierr)
	}
	if opts.Dir == "" && !keepDataDirs() {
		opts.Dir = t.TempDir()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	s, err := StartS3Server(sctx, opts)
	if err != nil {
		t.Fatalf("testsuite: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("testsuite: %v", err)
		}
	})
	t.Logf("testsuite: versitygw on %s (bucket %s, object lock %v, folder %s, started in %s)", s.Endpoint, s.Bucket,
		opts.ObjectLock, s.Dir, time.Since(start).Round(time.Millisecond))
	return s
}
