package testsuite

import (
	"context"
	"testing"
	"time"
)

// installTimeout bounds Install in the helpers: on a fresh machine it runs
// apt-get update and install.
const installTimeout = 15 * time.Minute

// StartSource starts a binlog source server (RoleSource) for the test,
// with its datadir under t.TempDir(), and stops it in t.Cleanup. It never
// skips: a missing or broken MariaDB fails the test with t.Fatalf.
func StartSource(t testing.TB) *Server {
	t.Helper()
	return StartServer(t, Options{Role: RoleSource})
}

// StartSourceWith is StartSource with extra mariadbd arguments appended last,
// e.g. "--binlog-format=STATEMENT" to test preflight checks.
func StartSourceWith(t testing.TB, extraArgs ...string) *Server {
	t.Helper()
	return StartServer(t, Options{Role: RoleSource, ExtraArgs: extraArgs})
}

// StartIndex starts an index server (RoleIndex) for the test, like
// StartSource.
func StartIndex(t testing.TB) *Server {
	t.Helper()
	return StartServer(t, Options{Role: RoleIndex})
}

// StartServer runs Install, then Start with opts (Dir defaults to
// t.TempDir(), or to os.TempDir() under DBTRAIL_KEEP_DATADIR=1), registers Stop with t.Cleanup and logs the port. Any failure
// is a t.Fatalf, never a skip.
func StartServer(t testing.TB, opts Options) *Server {
	t.Helper()
	ictx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	if err := Install(ictx); err != nil {
		t.Fatalf("testsuite: %v", err)
	}
	if opts.Dir == "" && opts.DataDir == "" && !keepDataDirs() {
		opts.Dir = t.TempDir() // with DBTRAIL_KEEP_DATADIR=1 it goes to os.TempDir() to survive the test
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	s, err := Start(sctx, opts)
	if err != nil {
		t.Fatalf("testsuite: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("testsuite: %v", err)
		}
	})
	t.Logf("testsuite: mariadb %s on %s (datadir %s, started in %s)", s.Role, s.Addr(), s.Dir,
		time.Since(start).Round(time.Millisecond))
	return s
}
