package remote

import (
	"context"
	"testing"
)

// TestPublisherRoundTrip: no publisher at first; a recorded one reads
// back, a second replaces it, and recording the same again is a no-op.
func TestPublisherRoundTrip(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, ok, err := f.m.Publisher(ctx); ok || err != nil {
		t.Fatalf("publisher of a new store: %v %v", ok, err)
	}
	for _, p := range []Publisher{{Host: "w1", Token: []byte(`{"q":"w1@1"}`)}, {Host: "w2", Token: []byte{0, 1, 2, '\t'}}, {Host: "w2", Token: []byte{0, 1, 2, '\t'}}} {
		if err := f.m.SetPublisher(ctx, p); err != nil {
			t.Fatal(err)
		}
		got, ok, err := f.m.Publisher(ctx)
		if err != nil || !ok || got.Host != p.Host || string(got.Token) != string(p.Token) {
			t.Fatalf("publisher %+v %v %v, want %+v", got, ok, err, p)
		}
	}
	if err := f.m.SetPublisher(ctx, Publisher{Host: "a\tb"}); err == nil {
		t.Fatal("a host with a tab was recorded")
	}
}
