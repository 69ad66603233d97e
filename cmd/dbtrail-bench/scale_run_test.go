package main

import (
	"testing"
	"time"
)

func TestCoveredCountsOverlapsOnce(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	steps := []scaleStep{
		{name: "RefreshTable", first: at(1), last: at(3)},
		{name: "PlanRefresh", first: at(0), last: at(0.5)},
		{name: "AdoptTable", first: at(2), last: at(4)},
		{name: "UploadSnapshot", first: at(5), last: at(6)},
	}
	if got, want := covered(steps), 4500*time.Millisecond; got != want {
		t.Fatalf("covered %s, want %s", got, want)
	}
}
