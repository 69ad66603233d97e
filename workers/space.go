package workers

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/index"
)

// Folder is a folder whose free space a SpaceWatch reports. Label is the
// metric's folder label: backup, work or dump.
type Folder struct{ Label, Path string }

// SpaceFolders are the folders a worker with acts writes to: the backup
// folder, the work folder and the dump folder of each source
// (<work>/<source>, where mydumper writes).
func SpaceFolders(acts *activities.Activities) []Folder {
	out := []Folder{{"backup", acts.BackupDir}, {"work", acts.WorkDir}}
	var names []string
	for name := range acts.Sources {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		out = append(out, Folder{"dump", filepath.Join(acts.WorkDir, name)})
	}
	return out
}

// SpaceEvery is how often a worker measures its folders' free space.
const SpaceEvery = 30 * time.Second

// SpaceWatch measures the free space of folders: each Check sets the gauge
// dbtrail_folder_free_bytes{folder, path} and logs a warning when a folder
// falls below disk.LowSpace (disk.Low, the rule `status` marks LOW with),
// once per crossing: again only after the folder was above it, which is
// logged too. A folder that cannot be measured loses its gauge and is
// logged once until it can be again. With a Recorder, Run also records
// each measure where `dbtrail status` and the API read it (the index).
type SpaceWatch struct {
	folders []Folder
	probe   disk.Probe
	log     *slog.Logger
	free    *prometheus.GaugeVec
	// state is each folder's last state: "ok", "low" or "error".
	state map[Folder]string

	// Recorder, when set before Run, is where Run records every measure,
	// as worker Worker.
	Recorder SpaceRecorder
	Worker   string
	// recordFailed is whether the last record failed (logged once per
	// failure run).
	recordFailed bool
}

// SpaceRecorder keeps a worker's folder measures (index.Store does).
type SpaceRecorder interface {
	RecordFolderSpace(ctx context.Context, worker string, fs []index.FolderSpace) error
}

// NewSpaceWatch returns a watch of folders measured with probe (disk.Free
// when nil), its gauge registered on reg (none when nil).
func NewSpaceWatch(reg prometheus.Registerer, folders []Folder, probe disk.Probe, log *slog.Logger) (*SpaceWatch, error) {
	if probe == nil {
		probe = disk.Free
	}
	if log == nil {
		log = slog.Default()
	}
	w := &SpaceWatch{folders: folders, probe: probe, log: log, state: map[Folder]string{},
		free: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "dbtrail_folder_free_bytes",
			Help: "Bytes an unprivileged writer can still write in the file system of the worker's backup, work and dump folders."},
			[]string{"folder", "path"})}
	if reg != nil {
		if err := reg.Register(w.free); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// Check measures every folder once and returns the measures.
func (w *SpaceWatch) Check() []index.FolderSpace {
	now := time.Now()
	out := make([]index.FolderSpace, 0, len(w.folders))
	for _, f := range w.folders {
		free, err := w.probe(f.Path)
		m := index.FolderSpace{Worker: w.Worker, Folder: f.Label, Path: f.Path, Free: free, MeasuredAt: now}
		if err != nil {
			m.Free, m.Error = 0, err.Error()
		}
		out = append(out, m)
		state := "ok"
		switch {
		case err != nil:
			state = "error"
			w.free.DeleteLabelValues(f.Label, f.Path)
		case disk.Low(free):
			state = "low"
		}
		if err == nil {
			w.free.WithLabelValues(f.Label, f.Path).Set(float64(free))
		}
		prev, seen := w.state[f]
		w.state[f] = state
		if prev == state || (!seen && state == "ok") {
			continue
		}
		attrs := []any{slog.String("folder", f.Label), slog.String("path", f.Path)}
		switch state {
		case "error":
			w.log.Warn("free space of a folder cannot be measured", append(attrs, slog.String("error", err.Error()))...)
		case "low":
			w.log.Warn("folder low on free space: steps that do not fit are refused (NoRoom)",
				append(attrs, slog.String("free", disk.Bytes(free)), slog.String("low_under", disk.Bytes(disk.LowSpace)))...)
		default:
			w.log.Info("folder has free space again", append(attrs, slog.String("free", disk.Bytes(free)))...)
		}
	}
	return out
}

// record keeps ms with the Recorder, if any, waiting at most every; a
// failure is logged once until a record succeeds again (the gauge and the
// log go on meanwhile).
func (w *SpaceWatch) record(ctx context.Context, ms []index.FolderSpace, every time.Duration) {
	if w.Recorder == nil {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, every)
	defer cancel()
	err := w.Recorder.RecordFolderSpace(rctx, w.Worker, ms)
	switch {
	case err != nil && ctx.Err() == nil && !w.recordFailed:
		w.log.Warn("free space of the folders not recorded for status", slog.String("error", err.Error()))
	case err == nil && w.recordFailed:
		w.log.Info("free space of the folders recorded for status again")
	}
	w.recordFailed = err != nil
}

// forget removes the worker's records, so that status does not show the
// folders of a worker that stopped (a worker killed leaves them, marked
// stale, until a worker on the same host records the same folder).
func (w *SpaceWatch) forget() {
	if w.Recorder == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.Recorder.RecordFolderSpace(ctx, w.Worker, nil); err != nil {
		w.log.Warn("free space records of the stopping worker not removed", slog.String("error", err.Error()))
	}
}

// Run checks (and records, with a Recorder) now and then every every until
// ctx ends; then it removes its records.
func (w *SpaceWatch) Run(ctx context.Context, every time.Duration) {
	defer w.forget()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		w.record(ctx, w.Check(), every)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// LatestSpaces drops from fs (index.Store.FolderSpaces) each record that
// a newer one of the same folder and path on the same host supersedes: the
// worker was restarted under a new Identity and the killed one left its
// records. Status and the API show what it keeps.
func LatestSpaces(fs []index.FolderSpace) []index.FolderSpace {
	type key struct{ host, folder, path string }
	keyOf := func(f index.FolderSpace) key {
		_, host, _ := strings.Cut(f.Worker, "@")
		return key{host, f.Folder, f.Path}
	}
	newest := map[key]time.Duration{}
	for _, f := range fs {
		if a, ok := newest[keyOf(f)]; !ok || f.Age < a {
			newest[keyOf(f)] = f.Age
		}
	}
	var out []index.FolderSpace
	for _, f := range fs {
		if f.Age == newest[keyOf(f)] {
			out = append(out, f)
		}
	}
	return out
}
