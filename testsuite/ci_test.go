package testsuite

import "testing"

// TestCIValue: the values CI systems set for CI are CI; anything else,
// empty included, is not.
func TestCIValue(t *testing.T) {
	for _, v := range []string{"true", "TRUE", "True", "1", "yes", "YES", " yes "} {
		if !ciValue(v) {
			t.Errorf("CI=%q read as not CI", v)
		}
	}
	for _, v := range []string{"", "false", "0", "no", "off", "maybe"} {
		if ciValue(v) {
			t.Errorf("CI=%q read as CI", v)
		}
	}
}
