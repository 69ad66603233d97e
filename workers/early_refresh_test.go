package workers

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/jobs"
)

// fakeIndex holds a checkpoint and counts events of seqs in (after, upto]
// as one event per seq of table app.t.
type fakeIndex struct{ last uint64 }

func (f *fakeIndex) LoadCheckpoint(context.Context, string) (change.Checkpoint, bool, error) {
	return change.Checkpoint{LastSeq: f.last}, f.last > 0, nil
}

func (f *fakeIndex) ChangeCounts(_ context.Context, _ string, after, upto uint64) (map[[2]string]int64, error) {
	return map[[2]string]int64{{"app", "t"}: int64(upto - after)}, nil
}

// fakeJobs records starts; running makes every start a running conflict,
// and a label is taken once started.
type fakeJobs struct {
	running bool
	starts  []jobs.Request
	labels  map[string]bool
}

func (f *fakeJobs) Start(_ context.Context, req jobs.Request) (jobs.Job, error) {
	if f.running {
		return jobs.Job{}, &jobs.ConflictError{Reason: jobs.ConflictRunning, JobID: "main:scheduled"}
	}
	if f.labels[req.Label] {
		return jobs.Job{}, &jobs.ConflictError{Reason: jobs.ConflictLabel, JobID: jobs.ID(req.Source, req.Label)}
	}
	f.labels[req.Label] = true
	f.starts = append(f.starts, req)
	return jobs.Job{ID: jobs.ID(req.Source, req.Label)}, nil
}

// writeCurrent makes a source folder whose current snapshot id is at seq.
func writeCurrent(t *testing.T, dir, id string, seq uint64) {
	t.Helper()
	snapDir := snapshot.Folder(dir).Snapshot(id)
	if err := os.MkdirAll(snapDir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := snapshot.Manifest{Version: snapshot.ManifestVersion, SnapshotID: id, Source: "main",
		Position: binlogpos.Position{File: "b.000001", Pos: 4, Seq: seq}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(snapDir, snapshot.ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, snapshot.CurrentLink)
	os.Remove(link)
	if err := os.Symlink(filepath.Join(snapshot.SnapshotsDir, id), link); err != nil {
		t.Fatal(err)
	}
}

func TestEarlyRefreshCheck(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ix, js := &fakeIndex{}, &fakeJobs{labels: map[string]bool{}}
	reg := prometheus.NewRegistry()
	w, err := NewEarlyRefresh(reg, EarlyRefreshConfig{Source: "main", SourceDir: dir, Index: ix, Jobs: js, MaxEvents: 100})
	if err != nil {
		t.Fatal(err)
	}
	check := func(want Outcome, wantN int64) {
		t.Helper()
		got, n, err := w.Check(ctx)
		if err != nil || got != want || n != wantN {
			t.Fatalf("Check = %s, %d, %v; want %s, %d", got, n, err, want, wantN)
		}
	}
	check(OutcomeNoSnapshot, 0) // no snapshot yet
	const first = "20261202T070000Z"
	writeCurrent(t, dir, first, 1000)
	check(OutcomeNoSnapshot, 0) // no checkpoint yet
	ix.last = 1100
	check(OutcomeBelow, 100) // at the bound: not past it
	ix.last = 1101
	js.running = true
	check(OutcomeRunning, 101)
	if len(js.starts) != 0 {
		t.Fatalf("started %d refreshes while one runs", len(js.starts))
	}
	js.running = false
	check(OutcomeStarted, 101)
	check(OutcomeAlready, 101) // one early refresh per snapshot
	if len(js.starts) != 1 || js.starts[0].Kind != jobs.Refresh || js.starts[0].Label != EarlyLabel(first) {
		t.Fatalf("starts %+v", js.starts)
	}
	writeCurrent(t, dir, "20261202T070100Z", 1101) // the refresh published
	check(OutcomeBelow, 0)
	ix.last = 1500
	check(OutcomeStarted, 399)
	want := map[string]float64{"dbtrail_early_refreshes_total": 2, "dbtrail_tail_events": 399,
		"dbtrail_early_refresh_checks_total/below": 2, "dbtrail_early_refresh_checks_total/started": 2,
		"dbtrail_early_refresh_checks_total/running": 1, "dbtrail_early_refresh_checks_total/already": 1,
		"dbtrail_early_refresh_checks_total/no-snapshot": 2}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			name := f.GetName()
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" {
					name += "/" + l.GetValue()
				}
			}
			if got := metricValue(m); got != want[name] {
				t.Errorf("%s = %v, want %v", name, got, want[name])
			}
			delete(want, name)
		}
	}
	if len(want) > 0 {
		t.Fatalf("metrics not registered: %v", want)
	}
	if _, err := NewEarlyRefresh(nil, EarlyRefreshConfig{Source: "main", SourceDir: dir, Index: ix, Jobs: js}); err == nil {
		t.Fatal("a bound of 0 events was accepted")
	}
	js.labels = map[string]bool{}
	failing := &EarlyRefresh{}
	*failing = *w
	failing.jobs = errJobs{}
	if _, _, err := failing.Check(ctx); err == nil || !errors.Is(err, errStart) {
		t.Fatalf("a failed start: %v", err)
	}
}

var errStart = errors.New("frontend unreachable")

type errJobs struct{}

func (errJobs) Start(context.Context, jobs.Request) (jobs.Job, error) { return jobs.Job{}, errStart }

func metricValue(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetGauge().GetValue()
}
