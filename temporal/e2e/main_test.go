package e2e

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dbtrail/dbtrail/testsuite"
)

// TestMain runs the package's tests under a watch that names a hung one
// (startHangWatch) and then stops and removes what they shared.
//
// How the package keeps its run short (make test runs it beside the other
// packages): every test has its own source MariaDB (capture reads its
// whole binlog and tests assert on seqs), its own embedded Temporal server
// and folders, and a database of its own on a shared index server
// (indexDatabase; a test that kills its index server has one of its own:
// withOwnIndex). The dbtrail binary is built once (buildDbtrail). Tests
// that spend most of their time waiting (a killed worker's heartbeat
// timeout, retry backoff against a stopped S3 server) call t.Parallel: go
// test runs them after the others, two at a time (-parallel defaults to
// GOMAXPROCS), so their waits overlap; each owns all its servers.
func TestMain(m *testing.M) {
	flag.Parse()
	stopWatch := startHangWatch()
	code := m.Run()
	stopWatch()
	shared.close()
	os.Exit(code)
}

// shared holds what the tests of this package share so that each is made
// once per test binary instead of once per test: the dbtrail binary and an
// index server.
var shared = &packageShared{}

// packageShared is built lazily: a test run that needs no dbtrail binary
// builds none.
type packageShared struct {
	binOnce sync.Once
	binDir  string
	bin     string
	binErr  error

	mu        sync.Mutex
	index     *testsuite.Server // started by the first borrowIndex
	indexLent bool
	databases atomic.Int64 // names each test's index database
}

// dbtrail builds cmd/dbtrail once (concurrent callers wait for the one
// build) and returns the binary's path.
func (s *packageShared) dbtrail() (string, error) {
	s.binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dbtrail-temporal-test-bin-")
		if err != nil {
			s.binErr = fmt.Errorf("build dbtrail: %w", err)
			return
		}
		s.binDir = dir
		bin := filepath.Join(dir, "dbtrail")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/dbtrail/dbtrail/cmd/dbtrail").CombinedOutput()
		if err != nil {
			s.binErr = fmt.Errorf("build dbtrail: %w\n%s", err, out)
			return
		}
		s.bin = bin
	})
	return s.bin, s.binErr
}

// close stops the shared index server and removes the binary's folder.
func (s *packageShared) close() {
	if s.index != nil {
		if err := s.index.Stop(); err != nil {
			slog.Error("stop the shared index server", "error", err)
		}
	}
	if s.binDir != "" {
		_ = os.RemoveAll(s.binDir)
	}
}
