package digest

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sha256("hello")
const helloSHA = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"

func TestOfFileAndHasherAgree(t *testing.T) {
	want := Digest{SHA256: helloSHA, Size: 5}
	if got, err := Of(strings.NewReader("hello")); err != nil || got != want {
		t.Fatalf("Of: %+v %v", got, err)
	}
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := File(p); err != nil || got != want {
		t.Fatalf("File: %+v %v", got, err)
	}
	h := NewHasher()
	io.WriteString(h, "hel")
	io.WriteString(h, "lo")
	if got := h.Digest(); got != want {
		t.Fatalf("Hasher: %+v", got)
	}
	if _, err := File(filepath.Join(t.TempDir(), "missing")); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestValidSHA256(t *testing.T) {
	good := helloSHA
	if !ValidSHA256(good) || !ValidSHA256(Bytes(nil).SHA256) {
		t.Fatal("a sha256 refused")
	}
	for _, bad := range []string{"", good[:63], good + "0", strings.ToUpper(good), good[:63] + "g", good[:63] + " "} {
		if ValidSHA256(bad) {
			t.Errorf("%q taken as a sha256", bad)
		}
	}
}
