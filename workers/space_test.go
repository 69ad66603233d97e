package workers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/index"
)

// TestSpaceWatch: the gauge follows each folder's free space; a folder
// falling below disk.LowSpace is warned about once per crossing (not at
// every check while it stays low), its recovery is logged, and a folder
// that cannot be measured loses its gauge and is logged once.
func TestSpaceWatch(t *testing.T) {
	const gib = 1 << 30
	free := map[string]uint64{"/b": gib, "/w": gib}
	var probeErr error
	probe := func(p string) (uint64, error) {
		if p == "/w" && probeErr != nil {
			return 0, probeErr
		}
		return free[p], nil
	}
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	w, err := NewSpaceWatch(reg, []Folder{{"backup", "/b"}, {"work", "/w"}}, probe, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	gauge := func(label, path string) float64 {
		var m dto.Metric
		if err := w.free.WithLabelValues(label, path).Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetGauge().GetValue()
	}
	lowWarnings := func() int { return strings.Count(logs.String(), "folder low on free space") }

	w.Check()
	if gauge("backup", "/b") != gib || lowWarnings() != 0 || logs.Len() != 0 {
		t.Fatalf("first check with room: gauge %v, logs %q", gauge("backup", "/b"), logs.String())
	}
	free["/b"] = disk.LowSpace - 1
	w.Check()
	free["/b"] = 10 << 20
	w.Check()
	w.Check()
	if gauge("backup", "/b") != 10<<20 {
		t.Errorf("gauge %v, want %d", gauge("backup", "/b"), 10<<20)
	}
	if n := lowWarnings(); n != 1 {
		t.Fatalf("%d low warnings while the folder stayed low, want 1: %s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "folder=backup path=/b free=") {
		t.Errorf("the warning does not name the folder and its free space: %s", logs.String())
	}
	free["/b"] = disk.LowSpace
	w.Check()
	free["/b"] = 1 << 20
	w.Check()
	if n := lowWarnings(); n != 2 || !strings.Contains(logs.String(), "folder has free space again") {
		t.Fatalf("after a recovery and a new fall: %d low warnings, want 2: %s", n, logs.String())
	}

	probeErr = errors.New("statfs /w: permission denied")
	w.Check()
	w.Check()
	if n := strings.Count(logs.String(), "cannot be measured"); n != 1 {
		t.Errorf("%d logs of a folder that cannot be measured, want 1", n)
	}
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			got = append(got, fmt.Sprintf("%s{%s} %v", f.GetName(), strings.Join(labels, ","), m.GetGauge().GetValue()))
		}
	}
	if want := []string{"dbtrail_folder_free_bytes{folder=backup,path=/b} 1.048576e+06"}; !slices.Equal(got, want) {
		t.Errorf("registry holds %q, want %q (the unmeasurable folder's gauge removed)", got, want)
	}
}

// fakeRecorder keeps what a SpaceWatch records, or fails with err.
type fakeRecorder struct {
	err    error
	worker string
	got    []index.FolderSpace
}

func (r *fakeRecorder) RecordFolderSpace(_ context.Context, worker string, fs []index.FolderSpace) error {
	if r.err != nil {
		return r.err
	}
	r.worker, r.got = worker, fs
	return nil
}

// TestSpaceWatchRecords: every measure is recorded for status, a folder
// that cannot be measured with its reason; a recorder that fails is logged
// once until it records again, and the measures go on meanwhile.
func TestSpaceWatchRecords(t *testing.T) {
	probe := func(p string) (uint64, error) {
		if p == "/gone" {
			return 0, errors.New("statfs /gone: no such file or directory")
		}
		return 5 << 30, nil
	}
	var logs bytes.Buffer
	w, err := NewSpaceWatch(nil, []Folder{{"backup", "/b"}, {"dump", "/gone"}}, probe, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	rec := &fakeRecorder{}
	w.Recorder, w.Worker = rec, "7@host"
	ctx := context.Background()
	w.record(ctx, w.Check(), time.Minute)
	if rec.worker != "7@host" || len(rec.got) != 2 ||
		rec.got[0].Folder != "backup" || rec.got[0].Path != "/b" || rec.got[0].Free != 5<<30 || rec.got[0].Error != "" || rec.got[0].MeasuredAt.IsZero() ||
		rec.got[1].Folder != "dump" || rec.got[1].Free != 0 || !strings.Contains(rec.got[1].Error, "no such file") {
		t.Fatalf("recorded %q: %+v", rec.worker, rec.got)
	}
	rec.err = errors.New("index unreachable")
	w.record(ctx, w.Check(), time.Minute)
	w.record(ctx, w.Check(), time.Minute)
	if n := strings.Count(logs.String(), "not recorded for status"); n != 1 || !strings.Contains(logs.String(), "index unreachable") {
		t.Fatalf("%d warnings of a failing recorder, want 1: %s", n, logs.String())
	}
	rec.err = nil
	w.record(ctx, w.Check(), time.Minute)
	if !strings.Contains(logs.String(), "recorded for status again") {
		t.Fatalf("no log of the recorder's recovery: %s", logs.String())
	}
	// A watch that stops removes its records.
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	w.Run(stopped, time.Hour)
	if rec.worker != "7@host" || rec.got != nil {
		t.Fatalf("after Run ended the recorder holds %q %+v, want 7@host's records removed", rec.worker, rec.got)
	}
}
