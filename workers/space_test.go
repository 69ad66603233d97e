package workers

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/dbtrail/dbtrail/internal/disk"
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
