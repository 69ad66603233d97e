package main

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/testsuite"
)

// TestDrillCollector reads the last drill of a real index at each scrape:
// nothing before the first drill, then the latest drill's start, verdict,
// rows and duration.
func TestDrillCollector(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	idx := testsuite.StartIndex(t)
	if err := idx.Exec(ctx, "CREATE DATABASE dbtrail"); err != nil {
		t.Fatal(err)
	}
	store, err := index.Open(ctx, idx.DSN("dbtrail"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Init(ctx); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(newDrillCollector(store, "main"))
	if got := gather(t, reg); len(got) != 0 {
		t.Fatalf("metrics before any drill: %v", got)
	}
	start := time.Date(2026, 12, 2, 2, 0, 0, 0, time.UTC)
	for i, v := range []string{index.DrillOK, index.DrillFailed} {
		s := start.Add(time.Duration(i) * time.Hour)
		if err := store.RecordDrill(ctx, index.Drill{Source: "main", StartedAt: s, Finished: s.Add(1500 * time.Millisecond), Target: "scratch:3306",
			Moment: "latest", Tables: 2, Rows: int64(100 + i), Verdict: v}); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.RecordDrill(ctx, index.Drill{Source: "main", StartedAt: start, Verdict: "maybe"}); err == nil {
		t.Fatal("a drill verdict that is neither ok nor failed was recorded")
	}
	want := map[string]float64{"dbtrail_restore_drill_last_duration_seconds": 1.5, "dbtrail_restore_drill_last_ok": 0,
		"dbtrail_restore_drill_last_rows": 101, "dbtrail_restore_drill_last_timestamp_seconds": 1796180400}
	got := gather(t, reg)
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// gather scrapes reg and returns each gauge of source main by name.
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != 1 || m.GetLabel()[0].GetName() != "source" || m.GetLabel()[0].GetValue() != "main" {
				t.Fatalf("%s: labels %v", mf.GetName(), m.GetLabel())
			}
			out[mf.GetName()] = m.GetGauge().GetValue()
		}
	}
	return out
}
