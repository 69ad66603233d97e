package main

import (
	"math"
	"testing"
	"time"
)

func TestCaptureCeiling(t *testing.T) {
	// 1,000,000 events at 3 + 2 + 1 µs each: 2 cores give 333,333 events a
	// second at most, a ratio of 0.83 against a raw reader of 400,000.
	c := captureCPU{capture: 3 * time.Second, index: 2 * time.Second, source: time.Second}
	if got, want := c.ceiling(1_000_000, 2, 400_000), 2/6e-6/400_000; math.Abs(got-want) > 1e-9 {
		t.Fatalf("ceiling %v, want %v", got, want)
	}
	if got := (captureCPU{}).ceiling(1_000_000, 2, 400_000); got != 0 {
		t.Fatalf("ceiling without CPU figures %v, want 0 (unknown)", got)
	}
}

func TestScaleCeilings(t *testing.T) {
	one := scaleRun{elapsed: 5 * time.Second, workerCPU: []time.Duration{4 * time.Second}, s3CPU: 2 * time.Second}
	two := scaleRun{elapsed: 4 * time.Second, workerCPU: []time.Duration{2 * time.Second, 3 * time.Second}, s3CPU: 2 * time.Second}
	spread, free := scaleCeilings(one, two, 2)
	// The 2-worker run's 7 s of CPU need 3.5 s on 2 cores; the 1-worker
	// run's 6 s, 3 s.
	if math.Abs(spread-5/3.5) > 1e-9 || math.Abs(free-5/3.0) > 1e-9 {
		t.Fatalf("ceilings %v / %v, want %v / %v", spread, free, 5/3.5, 5/3.0)
	}
}
