package index

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/testsuite"
)

type acquired struct {
	l   *Lease
	err error
}

// acquireAsync starts AcquireLease in a goroutine; waiting is closed when it
// reports being blocked.
func acquireAsync(ctx context.Context, s *Store, source string) (<-chan acquired, <-chan struct{}) {
	ch := make(chan acquired, 1)
	waiting := make(chan struct{})
	var calls atomic.Int32
	go func() {
		l, err := s.AcquireLease(ctx, source, func() {
			if calls.Add(1) == 1 {
				close(waiting)
			}
		})
		if calls.Load() > 1 {
			err = fmt.Errorf("onWait called %d times", calls.Load())
		}
		ch <- acquired{l, err}
	}()
	return ch, waiting
}

func waitAcquired(t *testing.T, ch <-chan acquired) *Lease {
	t.Helper()
	select {
	case a := <-ch:
		if a.err != nil {
			t.Fatal(a.err)
		}
		return a.l
	case <-time.After(30 * time.Second):
		t.Fatal("lease not acquired")
		return nil
	}
}

func TestLease(t *testing.T) {
	defer func(d time.Duration) { leaseKeepalive = d }(leaseKeepalive)
	leaseKeepalive = 100 * time.Millisecond // pings run all through the test
	srv := testsuite.StartIndex(t)
	s := openStore(t, srv, "dbtrail_test")
	ctx := context.Background()

	a, err := s.AcquireLease(ctx, "src", func() { t.Error("first AcquireLease waited") })
	if err != nil {
		t.Fatal(err)
	}
	if a.Name() != "dbtrail.capture.src" || a.ConnID() == 0 {
		t.Fatalf("lease %s conn %d", a.Name(), a.ConnID())
	}
	if err := a.Check(ctx); err != nil {
		t.Fatal(err)
	}
	// Another source is independent.
	o, err := s.AcquireLease(ctx, "other", nil)
	if err != nil {
		t.Fatal(err)
	}
	o.Release()

	// B blocks until A releases.
	chB, waitingB := acquireAsync(ctx, s, "src")
	select {
	case <-waitingB:
	case a := <-chB:
		t.Fatalf("second lease acquired while the first is held: %v", a.err)
	case <-time.After(30 * time.Second):
		t.Fatal("second AcquireLease neither waited nor returned")
	}
	time.Sleep(2500 * time.Millisecond) // past one GET_LOCK timeout: still waiting
	select {
	case <-chB:
		t.Fatal("second lease acquired while the first is held")
	default:
	}
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	if err := a.Check(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Check after Release: %v", err)
	}
	b := waitAcquired(t, chB)

	// A Tx fenced by B commits while B holds the lease.
	tx, err := s.Begin(ctx, "src", b)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.InsertEvents(ctx, []change.Event{ev(1, "t", "1", change.OpInsert, "1")}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("fenced commit with the lease held: %v", err)
	}

	// C blocks until B's connection is killed; then B has lost the lease.
	chC, waitingC := acquireAsync(ctx, s, "src")
	<-waitingC
	txB, err := s.Begin(ctx, "src", b)
	if err != nil {
		t.Fatal(err)
	}
	defer txB.Rollback()
	if err := txB.InsertEvents(ctx, []change.Event{ev(2, "t", "2", change.OpInsert, "2")}); err != nil {
		t.Fatal(err)
	}
	if err := srv.Exec(ctx, fmt.Sprintf("KILL %d", b.ConnID())); err != nil {
		t.Fatal(err)
	}
	c := waitAcquired(t, chC)
	defer c.Release()
	if err := b.Check(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Check of a killed lease: %v", err)
	}
	if err := txB.Commit(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("commit fenced by a lost lease: %v", err)
	}
	if n, _ := s.CountEvents(ctx, "src"); n != 1 {
		t.Fatalf("events after lost-lease commit: %d, want 1", n)
	}
	if err := b.Release(); err != nil && !strings.Contains(err.Error(), "release lease") {
		t.Fatalf("release of a killed lease: %v", err)
	}
	if err := c.Check(ctx); err != nil {
		t.Fatalf("new holder: %v", err)
	}

	// A waiter gives up when its context ends.
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := s.AcquireLease(cctx, "src", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("AcquireLease with a done context: %v", err)
	}
	if err := c.Check(ctx); err != nil {
		t.Fatalf("holder after a waiter gave up: %v", err)
	}
}
