package remote

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/testsuite"
)

// The content layout on a real S3 server (versitygw on loopback): the
// same scenarios as on a local folder, where Stat returns the sha256 the
// store records (x-amz-meta-sha256, kept by a copy) and a copy is a
// server-side CopyObject.

var s3Prefixes atomic.Int64

// newS3Fixture is a fixture on its own prefix of srv's bucket.
func newS3Fixture(t *testing.T, srv *testsuite.S3Server) *fixture {
	t.Helper()
	store, err := storage.Open(context.Background(), srv.URL(fmt.Sprintf("remote%03d", s3Prefixes.Add(1))), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return newFixtureOn(t, store)
}

func TestS3ContentObjects(t *testing.T) {
	srv := testsuite.StartS3(t)
	t.Run("SharedFilesFoundByContent", func(t *testing.T) { sharedFilesScenario(t, newS3Fixture(t, srv)) })
	t.Run("OldLayoutReadAndMigratedLazily", func(t *testing.T) { oldLayoutScenario(t, newS3Fixture(t, srv)) })
}
