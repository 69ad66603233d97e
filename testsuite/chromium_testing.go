package testsuite

import (
	"os/exec"
	"testing"
)

// chromiumNames are the names Chromium's binary goes by, Debian's first.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome"}

// Chromium returns the path of a Chromium binary for a browser test (the
// console's). Missing, the test fails under CI=true and is skipped
// otherwise; scripts/install-deps.sh installs Debian's chromium.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, n := range chromiumNames {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	const msg = "testsuite: no chromium on PATH (scripts/install-deps.sh installs it)"
	if InCI() {
		t.Fatal(msg)
	}
	t.Skip(msg + " (with CI=true this fails the test)")
	return ""
}
