package flock

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestTryLockExcludesAndReleases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("second TryLock: got %v, want ErrLocked", err)
	}
	unlock()
	unlock() // releasing twice is harmless
	again, err := TryLock(path)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
}

func TestLockWaitsForTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		u, err := Lock(context.Background(), path)
		if err == nil {
			u()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("Lock returned while held: %v", err)
	default:
	}
	unlock()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

func TestLockGivesUpWithItsContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want DeadlineExceeded", err)
	}
}

// TestLockDiesWithItsProcess: a lock held by a process that is killed is
// free at once (no stale lock file to clean up).
func TestLockDiesWithItsProcess(t *testing.T) {
	if os.Getenv("FLOCK_HOLDER") != "" {
		if _, err := TryLock(os.Getenv("FLOCK_HOLDER")); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("held\n")
		time.Sleep(time.Hour)
	}
	path := filepath.Join(t.TempDir(), "x.lock")
	cmd := exec.Command(os.Args[0], "-test.run=TestLockDiesWithItsProcess")
	cmd.Env = append(os.Environ(), "FLOCK_HOLDER="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || string(buf) != "held\n" {
		t.Fatalf("holder did not start: %q %v", buf, err)
	}
	if _, err := TryLock(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("while the holder lives: got %v, want ErrLocked", err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	unlock, err := TryLock(path)
	if err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
	unlock()
}
