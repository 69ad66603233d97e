package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesOrLeavesUntouched(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.sql")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := Write(p, 0o600, func(w io.Writer) error { w.Write([]byte("partial")); return boom }); !errors.Is(err, boom) {
		t.Fatalf("want the writer's error, got %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("a failed write changed the file: %q", b)
	}
	if err := Write(p, 0o600, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if b, _ := os.ReadFile(p); string(b) != "new" || err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("content %q mode %v err %v", b, st.Mode(), err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(p), ".f.sql.*.tmp"))
	if len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

func TestWriteHashedDigestsWhatItWrote(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	d, err := WriteHashed(path, 0o644, func(w io.Writer) error {
		_, err := io.WriteString(w, "hello")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// sha256("hello")
	if d.SHA256 != "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" || d.Size != 5 {
		t.Fatalf("digest %+v", d)
	}
	if _, err := WriteHashed(path, 0o644, func(io.Writer) error { return io.ErrUnexpectedEOF }); err == nil {
		t.Fatal("a failed write returned no error")
	}
	if b, _ := os.ReadFile(path); string(b) != "hello" {
		t.Fatalf("failed write changed the file: %q", b)
	}
}
