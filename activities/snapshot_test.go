package activities

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/dbtrail/dbtrail/calls"
)

// TestAllocateSnapshotInAFile: with the backup folder a regular file,
// AllocateSnapshot fails at once naming it (it searched for a free id
// forever: every id looked taken).
func TestAllocateSnapshotInAFile(t *testing.T) {
	backups := filepath.Join(t.TempDir(), "backups")
	must(t, os.WriteFile(backups, []byte("not a folder"), 0o644))
	a := &Activities{BackupDir: backups, WorkDir: t.TempDir(), Log: quietLog()}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	// A guard against the old endless search, not a bound on its time.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := env.ExecuteActivity(a.AllocateSnapshot, calls.AllocateSnapshotInput{Source: "main"})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), backups+": not a directory") {
			t.Fatalf("got %v, want an error naming %s as not a directory", err, backups)
		}
	case <-ctx.Done():
		t.Fatal("AllocateSnapshot did not end with the backup folder a file")
	}
}
