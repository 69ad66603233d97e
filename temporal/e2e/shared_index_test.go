package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/testsuite"
)

// indexDatabase gives the test a new, empty database on an index server
// and returns the server and the database's name. The package's tests
// share one index server (a MariaDB start and stop less per test), lent to
// one test at a time: a test that asks while another holds it (a parallel
// test) gets a server of its own, because capture's lease and the
// partition lock are server-wide named locks (GET_LOCK) of source "main".
// The database is dropped, and the server given back, when the test ends,
// after everything the test registered later (capture, store) has stopped.
func indexDatabase(t *testing.T, ctx context.Context) (*testsuite.Server, string) {
	t.Helper()
	srv := shared.borrowIndex(t)
	if srv == nil {
		srv = testsuite.StartIndex(t)
		must(t, srv.Exec(ctx, "CREATE DATABASE dbtrail"))
		return srv, "dbtrail"
	}
	name := fmt.Sprintf("dbtrail_t%d", shared.databases.Add(1))
	must(t, srv.Exec(ctx, "CREATE DATABASE "+name))
	t.Cleanup(func() {
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := srv.Exec(dctx, "DROP DATABASE "+name); err != nil {
			t.Errorf("drop the test's index database %s: %v", name, err)
		}
	})
	return srv, name
}

// borrowIndex lends the shared index server to t until t ends, starting it
// on first use; it returns nil when another test holds it.
func (s *packageShared) borrowIndex(t *testing.T) *testsuite.Server {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.indexLent {
		return nil
	}
	if s.index == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		if err := testsuite.Install(ctx); err != nil {
			t.Fatalf("testsuite: %v", err)
		}
		srv, err := testsuite.Start(ctx, testsuite.Options{Role: testsuite.RoleIndex})
		if err != nil {
			t.Fatalf("testsuite: shared index server: %v", err)
		}
		t.Logf("testsuite: shared index server on %s (datadir %s)", srv.Addr(), srv.Dir)
		s.index = srv
	}
	s.indexLent = true
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.indexLent = false
	})
	return s.index
}
