package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRetryNextToProgress: a retried step shows after the progress while
// it fails, and is gone (written over on a terminal) once it succeeds.
func TestRetryNextToProgress(t *testing.T) {
	failing := progress{phase: "refreshing tables", counts: "5/10 tables", retry: "retrying RefreshTable (attempt 3 of 10): no space left on device; next attempt in 20s"}
	ok := progress{phase: "refreshing tables", counts: "6/10 tables"}
	if got := failing.plainLine(); !strings.HasSuffix(got, " ! retrying RefreshTable (attempt 3 of 10): no space left on device; next attempt in 20s") {
		t.Errorf("plain line %q", got)
	}
	if got := ok.plainLine(); strings.Contains(got, "retrying") {
		t.Errorf("plain line after success %q", got)
	}
	var b bytes.Buffer
	v := &barView{w: &b}
	v.show(failing)
	v.show(ok)
	lines := strings.Split(b.String(), "\r")
	last := lines[len(lines)-1]
	if strings.Contains(last, "retrying") || len([]rune(last)) != len([]rune(failing.barLine())) {
		t.Errorf("the bar after success %q does not cover the retried one (%d runes)", last, len([]rune(failing.barLine())))
	}
}
