package testsuite

import (
	"os"
	"strings"
)

// InCI reports whether the tests run in CI, where a missing server or tool
// fails a test instead of skipping it: the CI environment variable is one
// of the values CI systems set, true, 1 or yes (any case). It is the one
// place CI is read.
func InCI() bool { return ciValue(os.Getenv("CI")) }

// ciValue is whether v, a value of CI, says the tests run in CI.
func ciValue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes":
		return true
	}
	return false
}
