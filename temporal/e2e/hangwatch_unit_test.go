package e2e

import (
	"strings"
	"testing"
)

// TestHangWatchNamesTheRunningTest reads this process's own stacks: the
// watch's summary names this test and keeps its dbtrail frames.
func TestHangWatchNamesTheRunningTest(t *testing.T) {
	tests, ours := hungTests(string(allStacks()))
	found := false
	for _, name := range tests {
		found = found || name == "TestHangWatchNamesTheRunningTest"
	}
	if !found {
		t.Fatalf("the running tests named: %q", tests)
	}
	joined := strings.Join(ours, "\n\n")
	if !strings.Contains(joined, "e2e.TestHangWatchNamesTheRunningTest") || !strings.HasPrefix(joined, "goroutine ") {
		t.Fatalf("the dbtrail frames: %s", joined)
	}
}
