package remote

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/retention"
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
	t.Run("Sweep", func(t *testing.T) { sweepScenario(t, newS3Fixture(t, srv)) })
	t.Run("KillBetweenObjectsAndManifest", func(t *testing.T) { killScenario(t, newS3Fixture(t, srv)) })
}

// TestS3SweepUnderObjectLock: on a bucket whose default retention keeps
// every object, an unreferenced content object past the grace period is
// refused by the store itself: recorded as storage.ErrLocked, left whole.
func TestS3SweepUnderObjectLock(t *testing.T) {
	srv := testsuite.StartS3With(t, testsuite.S3Options{ObjectLock: true, RetentionDays: 1})
	f := newS3Fixture(t, srv)
	s := f.publish(ids[0], "", 10, "table", "pd0", "up0")
	f.upload(ids[0])
	stray := f.objectName(digest.Bytes([]byte("left by an upload cut short")))
	putAt(t, f, stray, "left by an upload cut short")
	f.later(2 * retention.ObjectGrace)
	sw, err := f.m.SweepObjects(f.ctx)
	if err != nil || len(sw.Deleted) != 0 || !errors.Is(sw.Refused[stray], storage.ErrLocked) || sw.Referenced != 3 {
		t.Fatalf("sweep under Object Lock %+v (%v)", sw, err)
	}
	if _, err := f.store.Stat(f.ctx, stray); err != nil {
		t.Fatalf("a refused object is gone: %v", err)
	}
	f.checkRemote(s)
}
