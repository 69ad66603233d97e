package verify

import (
	"sort"
	"testing"
)

func TestCompareKeys(t *testing.T) {
	keys := []string{`[10]`, `["b",1]`, `[-5]`, `[18446744073709551615]`, `[2]`, `["a",10]`, `["a",9]`, `[null]`, `["a"]`, `[1.5]`, `not json`}
	sort.Slice(keys, func(i, j int) bool { return compareKeys(keys[i], keys[j]) < 0 })
	want := []string{`[-5]`, `[1.5]`, `[2]`, `[10]`, `[18446744073709551615]`, `["a"]`, `["a",9]`, `["a",10]`, `["b",1]`, `[null]`, `not json`}
	for i := range want {
		if keys[i] != want[i] {
			t.Fatalf("sorted %q, want %q", keys, want)
		}
	}
}
