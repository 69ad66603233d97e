package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dbtrail/dbtrail/calls"
)

func TestVerifyCollector(t *testing.T) {
	c := newVerifyCollector("main")
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	if g := gather(t, reg); len(g) != 0 {
		t.Fatalf("before a client: %v; want no metric", g)
	}
	set := func(f lastVerifyFunc) { c.last.Store(&f) }
	set(func(context.Context) (calls.VerifySnapshotResult, float64, bool, error) {
		return calls.VerifySnapshotResult{Match: 3, Mismatch: 2, Inconclusive: 1, Errors: 1}, 1764633600, true, nil
	})
	g := gather(t, reg)
	if g["dbtrail_verify_mismatched_tables"] != 2 || g["dbtrail_verify_unverified_tables"] != 2 || g["dbtrail_verify_last_timestamp_seconds"] != 1764633600 {
		t.Fatalf("gauges %v", g)
	}
	set(func(context.Context) (calls.VerifySnapshotResult, float64, bool, error) {
		return calls.VerifySnapshotResult{}, 0, false, nil
	})
	if g := gather(t, reg); len(g) != 0 {
		t.Fatalf("no verify finished: %v; want no metric", g)
	}
	set(func(context.Context) (calls.VerifySnapshotResult, float64, bool, error) {
		return calls.VerifySnapshotResult{}, 0, false, errors.New("temporal down")
	})
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "temporal down") {
		t.Fatalf("a failed read: %v, want the scrape to report it", err)
	}
}
