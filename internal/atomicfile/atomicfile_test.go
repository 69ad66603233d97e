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
