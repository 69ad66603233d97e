package activities

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestEnginePool: engines are reused between activities, a failed one is
// closed, and the folders of killed workers' engines are removed.
func TestEnginePool(t *testing.T) {
	work := t.TempDir()
	dead := filepath.Join(work, "fold", "engine-2147483646-1")
	if err := os.MkdirAll(dead, 0o755); err != nil {
		t.Fatal(err)
	}
	a := &Activities{WorkDir: work, Engines: NewEnginePool(work, "")}
	ctx := context.Background()
	e1, release1, err := a.engine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Fatalf("a dead worker's engine folder is still there: %v", err)
	}
	release1(false)
	e2, release2, err := a.engine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if e2 != e1 {
		t.Fatal("an idle engine was not reused")
	}
	release2(true) // failed: closed, its folder removed
	if _, err := os.Stat(e2.TempDir()); !os.IsNotExist(err) {
		t.Fatalf("a failed engine's folder is still there: %v", err)
	}
	e3, release3, err := a.engine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if e3 == e2 {
		t.Fatal("a failed engine was reused")
	}
	release3(false)
	if err := a.Engines.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e3.TempDir()); !os.IsNotExist(err) {
		t.Fatalf("an idle engine's folder is still there after Close: %v", err)
	}
	// Without a pool, an engine is closed when released.
	b := &Activities{WorkDir: work}
	e4, release4, err := b.engine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	release4(false)
	if _, err := os.Stat(e4.TempDir()); !os.IsNotExist(err) {
		t.Fatalf("an engine without a pool was kept: %v", err)
	}
}
