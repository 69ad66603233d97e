package storagetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/dbtrail/dbtrail/internal/storage"
)

func wantMoved(t *testing.T, what string, err error, got string) {
	t.Helper()
	var pm *storage.PointerMovedError
	if !errors.Is(err, storage.ErrPointerMoved) || !errors.As(err, &pm) || pm.Got != got {
		t.Fatalf("%s: err = %v, want a *PointerMovedError finding %q", what, err, got)
	}
}

func readPointer(t *testing.T, ctx context.Context, s storage.Store, name, want string) {
	t.Helper()
	v, err := s.ReadPointer(ctx, name)
	if err != nil || v != want {
		t.Fatalf("ReadPointer %s = %q, %v; want %q", name, v, err, want)
	}
}

func testPointer(t *testing.T, h Harness) {
	ctx, s := testCtx(t), h.New(t)
	const p = "main/current"
	_, err := s.ReadPointer(ctx, p)
	wantNotExist(t, "ReadPointer before creation", err)
	wantMoved(t, "swap of a missing pointer from a value", s.SwapPointer(ctx, p, "snapshots/a", "snapshots/b"), "")
	if err := s.SwapPointer(ctx, p, "", "snapshots/a"); err != nil {
		t.Fatalf("create pointer: %v", err)
	}
	readPointer(t, ctx, s, p, "snapshots/a")
	wantMoved(t, "second creation", s.SwapPointer(ctx, p, "", "snapshots/b"), "snapshots/a")
	wantMoved(t, "swap from a wrong value", s.SwapPointer(ctx, p, "snapshots/x", "snapshots/b"), "snapshots/a")
	readPointer(t, ctx, s, p, "snapshots/a")
	if err := s.SwapPointer(ctx, p, "snapshots/a", "snapshots/b"); err != nil {
		t.Fatalf("swap: %v", err)
	}
	readPointer(t, ctx, s, p, "snapshots/b")
	if err := s.SwapPointer(ctx, p, "snapshots/a", "snapshots/b"); err != nil {
		t.Fatalf("repeated swap to the value held: %v", err)
	}
	wantMoved(t, "swap from the old value", s.SwapPointer(ctx, p, "snapshots/a", "snapshots/c"), "snapshots/b")
	// A pointer reads as a small object holding its value.
	info, err := s.Stat(ctx, p)
	if err != nil || info.Size != int64(len("snapshots/b")) {
		t.Fatalf("Stat of pointer = %+v, %v", info, err)
	}
	if got := readAll(t, ctx, s, p); string(got) != "snapshots/b" {
		t.Fatalf("Open of pointer read %q", got)
	}
	checkList(t, ctx, s, "main/", p)
	for _, bad := range []string{"", strings.Repeat("x", 2000), "a\x00b"} {
		if err := s.SwapPointer(ctx, p, "snapshots/b", bad); err == nil {
			t.Fatalf("SwapPointer to %q succeeded", bad)
		}
	}
	readPointer(t, ctx, s, p, "snapshots/b")
	if h.Retains {
		return
	}
	if err := s.Delete(ctx, p); err != nil {
		t.Fatalf("Delete pointer: %v", err)
	}
	_, err = s.ReadPointer(ctx, p)
	wantNotExist(t, "ReadPointer after Delete", err)
	if err := s.SwapPointer(ctx, p, "", "snapshots/c"); err != nil {
		t.Fatalf("create pointer after Delete: %v", err)
	}
	readPointer(t, ctx, s, p, "snapshots/c")
}

func testConcurrentSwap(t *testing.T, h Harness) {
	ctx, s := testCtx(t), h.New(t)
	const rounds = 12
	race := func(name, old string, values [2]string) (winner string) {
		t.Helper()
		var wg sync.WaitGroup
		var errs [2]error
		start := make(chan struct{})
		for i := range values {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = s.SwapPointer(ctx, name, old, values[i])
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
				winner = values[i]
			case errors.Is(err, storage.ErrPointerMoved):
			default:
				t.Fatalf("swap %s to %s: %v", name, values[i], err)
			}
		}
		if won != 1 {
			t.Fatalf("swap %s from %q: %d writers won (%v), want exactly 1", name, old, won, errs)
		}
		readPointer(t, ctx, s, name, winner)
		return winner
	}
	cur := race("p", "", [2]string{"create-a", "create-b"})
	for r := 0; r < rounds; r++ {
		a, b := "a-"+string(rune('A'+r)), "b-"+string(rune('A'+r))
		cur = race("p", cur, [2]string{a, b})
	}
}
