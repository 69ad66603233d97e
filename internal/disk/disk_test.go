package disk

import (
	"errors"
	"testing"
)

func TestCheck(t *testing.T) {
	probe := func(free uint64) Probe { return func(string) (uint64, error) { return free, nil } }
	err := Check(probe(1<<30), "/backups", 2<<30, "rewrite shop.orders")
	var nr *NoSpaceError
	if !errors.As(err, &nr) || err.Error() != "rewrite shop.orders needs about 2.0 GiB in /backups (1.0 GiB free)" {
		t.Fatalf("%v", err)
	}
	if err := Check(probe(2<<30), "/backups", 2<<30, "x"); err != nil {
		t.Fatal(err)
	}
	if err := Check(probe(2<<30-1), "/backups", 2<<30, "x"); err == nil {
		t.Fatal("one byte short: want a refusal")
	}
	free, err := Free(t.TempDir() + "/not/yet")
	if err != nil || free == 0 {
		t.Fatalf("Free of a folder not made yet: %d %v", free, err)
	}
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 5 << 20: "5.0 MiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
