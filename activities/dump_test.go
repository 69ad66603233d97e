package activities

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/dbtrail/dbtrail/calls"
)

// TestDumpKillsAStalledMydumper: a mydumper that prints once and then hangs
// (as one waiting for a lock on the source would) is killed after DumpStall
// without progress, and the attempt fails with what it printed, so the
// backup is retried instead of waiting forever.
func TestDumpKillsAStalledMydumper(t *testing.T) {
	work := t.TempDir()
	fake := filepath.Join(t.TempDir(), "mydumper")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'WARNING: Using trx_consistency_only'\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := &Activities{WorkDir: work, Mydumper: fake, DumpStall: 400 * time.Millisecond,
		Sources: map[string]Source{"main": {Name: "main", DSN: "u:p@tcp(127.0.0.1:1)/"}}}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	_, err := env.ExecuteActivity(a.Dump, calls.DumpInput{Source: "main", SnapshotID: "20261201T000000Z"})
	if err == nil || !strings.Contains(err.Error(), "made no progress for 400ms") || !strings.Contains(err.Error(), "trx_consistency_only") || !strings.Contains(err.Error(), "source threads unknown") {
		t.Fatalf("want a stall error with mydumper's output, got %v", err)
	}
}
