package rowimage

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// TestPlainASCII8 checks the word test against a byte by byte reference, on
// words made of the bytes around every boundary it tests.
func TestPlainASCII8(t *testing.T) {
	edges := []byte{0, 1, 0x1f, 0x20, 0x21, '"', 0x23, 0x5b, '\\', 0x5d, 0x7e, 0x7f, 0x80, 0xc3, 0xff, 'a'}
	r := rand.New(rand.NewPCG(7, 8))
	var w [8]byte
	for n := 0; n < 200000; n++ {
		for i := range w {
			if r.IntN(3) == 0 {
				w[i] = byte(r.IntN(256))
			} else {
				w[i] = edges[r.IntN(len(edges))]
			}
		}
		want := true
		for _, b := range w {
			if b >= 0x80 || jsonEscape[b] != "" {
				want = false
			}
		}
		if got := plainASCII8(binary.LittleEndian.Uint64(w[:])); got != want {
			t.Fatalf("plainASCII8(% x) = %v, want %v", w, got, want)
		}
	}
}

// TestAppendValidJSONStringMatchesBytewise compares the word-at-a-time loop
// with the plain per-byte definition on random text.
func TestAppendValidJSONStringMatchesBytewise(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	alphabet := []string{"a", "Z", " ", "\"", "\\", "\n", "\x00", "\x1f", "é", "😀", "\xff", "\xc3", "0123456789"}
	for n := 0; n < 20000; n++ {
		var b []byte
		for k := r.IntN(40); k > 0; k-- {
			b = append(b, alphabet[r.IntN(len(alphabet))]...)
		}
		got, ok := appendValidJSONString([]byte("x"), b)
		if ok != utf8.Valid(b) {
			t.Fatalf("%q: ok %v", b, ok)
		}
		if !ok {
			continue
		}
		want := append([]byte(`x"`), appendJSONBody(nil, b)...)
		want = append(want, '"')
		if string(got) != string(want) {
			t.Fatalf("%q:\n got %s\nwant %s", b, got, want)
		}
	}
}
