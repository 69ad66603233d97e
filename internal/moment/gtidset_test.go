package moment

import "testing"

func TestGTIDSetMax(t *testing.T) {
	for _, c := range []struct {
		set, dom string
		hi       uint64
		known    bool
	}{
		{"0-1-100,1-2-7", "0", 100, true},
		{"0-1-100,0-2-120,1-2-7", "0", 120, true},
		{"0-1-100", "1", 0, false},
		{"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7-9,aaaaaaaa-71ca-11e1-9e33-c80aa9429562:1-3", "3e11fa47-71ca-11e1-9e33-c80aa9429562", 9, true},
		{"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:tag:1-4", "3e11fa47-71ca-11e1-9e33-c80aa9429562:tag", 4, true},
		{"", "0", 0, false},
	} {
		hi, known := gtidSetMax(c.set, c.dom)
		if hi != c.hi || known != c.known {
			t.Errorf("%q %q: %d %v, want %d %v", c.set, c.dom, hi, known, c.hi, c.known)
		}
	}
}
