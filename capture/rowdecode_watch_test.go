package capture

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A pump waiting for the source longer than the silence is a dead
// connection: watch fails with a transient (restartable) error.
func TestWatchFailsOnSilentSource(t *testing.T) {
	d := newRowDecoder()
	d.waitingSince.Store(time.Now().Add(-time.Minute).UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := d.watch(ctx, 50*time.Millisecond)
	var te *transientError
	if !errors.As(err, &te) {
		t.Fatalf("watch = %v, want a transient error", err)
	}
	if Permanent(err) {
		t.Fatalf("watch error %v is permanent", err)
	}
}

// A pump that is not waiting for the source (it decodes, or capture holds
// it up) is never taken for a silent source, however long it takes.
func TestWatchIgnoresBusyPump(t *testing.T) {
	d := newRowDecoder()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := d.watch(ctx, 20*time.Millisecond); err != nil {
		t.Fatalf("watch of a busy pump = %v, want nil", err)
	}
}
