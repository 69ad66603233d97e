package sqlport

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// writeN writes n bytes to the path it is given and counts its calls.
func writeN(n int, calls *int) func(string) error {
	return func(path string) error {
		*calls++
		return os.WriteFile(path, make([]byte, n), 0o600)
	}
}

func TestStageCacheReuseAndEvict(t *testing.T) {
	ctx := context.Background()
	c, err := newStageCache(filepath.Join(t.TempDir(), "cache"), 250)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	a, err := c.acquire(ctx, "cut1\x00shop.a", ".parquet", writeN(100, &calls))
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.acquire(ctx, "cut1\x00shop.a", ".parquet", writeN(100, &calls))
	if err != nil || again != a || calls != 1 {
		t.Fatalf("the same key again: %v, written %d times", err, calls)
	}
	other, err := c.acquire(ctx, "cut2\x00shop.a", ".parquet", writeN(100, &calls))
	if err != nil || other == a || calls != 2 {
		t.Fatalf("another cut is its own entry: %v, written %d times", err, calls)
	}
	c.release(a)
	c.release(again)
	c.release(other)
	// A third entry passes the bound: the least recently used goes.
	b, err := c.acquire(ctx, "cut3\x00shop.a", ".parquet", writeN(100, &calls))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a.path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the least recently used entry was kept: %v", err)
	}
	if _, err := os.Stat(b.path); err != nil {
		t.Errorf("the entry in use: %v", err)
	}
	if got := c.bytes(); got != 200 {
		t.Errorf("cache holds %d bytes, want 200", got)
	}
	// Entries in use stay past the bound.
	d, err := c.acquire(ctx, "cut4\x00shop.a", ".parquet", writeN(300, &calls))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.path); err != nil {
		t.Errorf("an entry in use was evicted: %v", err)
	}
	// A failed write is not kept.
	_, err = c.acquire(ctx, "cut5\x00shop.a", ".parquet", func(string) error { return errors.New("boom") })
	if err == nil {
		t.Fatal("a failed write answered")
	}
	if _, err := c.acquire(ctx, "cut5\x00shop.a", ".parquet", writeN(1, &calls)); err != nil {
		t.Errorf("after a failed write, the next writes again: %v", err)
	}
}
