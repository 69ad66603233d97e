package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/archive/archivebench"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/testsuite"
)

// benchArchive writes the capture benchmark's batch workload of n row events on
// a real source, all committed in one past hour (SET TIMESTAMP), captures
// it into a fresh index (capture's rate on these events), then runs the
// ArchiveHour activity on that hour (index → Parquet → a local folder
// store, confirmed, partition dropped) and the ReindexHour activity of its
// file into an empty index, and compares their rates with capture's. The
// read of one table of twenty is archivebench.Bench's.
func benchArchive(ctx context.Context, n int) ([]result, error) {
	src, idx, stop, err := startSourceAndIndex(ctx)
	if err != nil {
		return nil, err
	}
	defer stop()
	hour := time.Now().UTC().Truncate(time.Hour).Add(-48 * time.Hour)
	start, end, err := writeHourWorkload(ctx, src, n, hour)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "dbtrail-bench-archive-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	// Capture, archive and restore take turns, three rounds, and the best
	// of each is compared: this machine's speed drifts by tens of percent
	// within a minute (see benchCapture).
	var capRate, restRate float64
	var capEvents int64
	var ar archiveRun
	var capRates, archRates []string
	for round := range 3 {
		run, err := captureInto(ctx, src, idx, start, end)
		if err != nil {
			return nil, err
		}
		r, events := run.rate, run.events
		capRate, capEvents = max(capRate, r), events
		dir := filepath.Join(tmp, fmt.Sprint(round))
		a, err := archiveOnce(ctx, idx, src, dir, hour)
		if err != nil {
			return nil, err
		}
		if a.events != events {
			return nil, fmt.Errorf("archive wrote %d events of the hour, capture indexed %d", a.events, events)
		}
		if a.rate > ar.rate {
			ar = a
		}
		rr, err := restoreOnce(ctx, idx, src, dir, hour)
		if err != nil {
			return nil, err
		}
		restRate = max(restRate, rr)
		capRates, archRates = append(capRates, fmt.Sprintf("%.0f", r)), append(archRates, fmt.Sprintf("%.0f", a.rate))
	}
	cb, err := archivebench.Bench(n, 20, 3)
	if err != nil {
		return nil, err
	}
	archRatio, restRatio := ar.rate/capRate, restRate/capRate
	perEvent := float64(ar.bytes) / float64(ar.events)
	return []result{
		{"archive: row events in the hour", fmt.Sprint(capEvents), "", "capture benchmark's workload, committed in one past hour (SET TIMESTAMP)"},
		{"archive: capture into index", fmt.Sprintf("%.0f events/s", capRate), "", "the same events; best of 3 (" + strings.Join(capRates, ", ") + "), taking turns with archive and restore"},
		{"archive: ArchiveHour activity", fmt.Sprintf("%.0f events/s", ar.rate), "", "index → Parquet file → local folder store, confirmed, partition dropped; " +
			sizeText(ar.bytes) + "; best of 3 (" + strings.Join(archRates, ", ") + ")"},
		judged("archive: ratio archive / capture", fmt.Sprintf("%.2f", archRatio), "", measured(archRatio, atLeast(1, "%.1f"))),
		judged("archive: Parquet bytes per event", fmt.Sprintf("%.1f B", perEvent), "", measured(perEvent, atMost(40, "%.0f"))),
		{"archive: ReindexHour activity", fmt.Sprintf("%.0f events/s", restRate), "", "archive file → seq order → packed chunks in an empty index, one transaction; best of 3"},
		judged("archive: ratio reindex / capture", fmt.Sprintf("%.2f", restRatio), "", measured(restRatio, atLeast(1, "%.1f"))),
		judged("archive: read one of 20 equally busy tables / whole file", fmt.Sprintf("%.3f", cb.ReadRatio),
			fmt.Sprintf("%s / %s, %d events (archivebench.Bench, best of 3)", cb.ReadOne.Round(time.Millisecond), cb.ReadAll.Round(time.Millisecond), cb.Events),
			measured(cb.ReadRatio, atMost(0.15, "%.2f"))),
	}, nil
}

// writeHourWorkload is writeBatchWorkload on one connection whose statements
// all commit at hour plus one minute.
func writeHourWorkload(ctx context.Context, src *testsuite.Server, n int, hour time.Time) (start, end binlogpos.Position, err error) {
	db, err := createBenchTable(ctx, src)
	if err != nil {
		return
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	if _, err = db.ExecContext(ctx, "SET TIMESTAMP = ?", hour.Unix()+60); err != nil {
		return
	}
	if start, err = masterPos(ctx, src); err != nil {
		return
	}
	if err = batchStatements(ctx, db, n); err != nil {
		return
	}
	end, err = masterPos(ctx, src)
	return
}

// archiveRun is one ArchiveHour run's figures.
type archiveRun struct {
	events, bytes int64
	rate          float64
}

// archiveOnce gives the hour captured into bench_index a partition of its
// own and runs ArchiveHour on it, timing the activity alone.
func archiveOnce(ctx context.Context, idx, src *testsuite.Server, dir string, hour time.Time) (archiveRun, error) {
	store, err := index.Open(ctx, idx.DSN("bench_index"))
	if err != nil {
		return archiveRun{}, err
	}
	defer store.Close()
	if err := store.SplitPartitions(ctx, change.HourID(hour)); err != nil {
		return archiveRun{}, err
	}
	acts, err := benchActivities(store, src, dir)
	if err != nil {
		return archiveRun{}, err
	}
	warmUp()
	env := newActivityEnv()
	env.RegisterActivity(acts)
	began := time.Now()
	val, err := env.ExecuteActivity(acts.ArchiveHour, calls.ArchiveHourInput{Source: "main", Hour: hour})
	elapsed := time.Since(began)
	if err != nil {
		return archiveRun{}, err
	}
	var res calls.ArchiveHourResult
	if err := val.Get(&res); err != nil {
		return archiveRun{}, err
	}
	if res.Partition == "" || res.Kept != "" {
		return archiveRun{}, fmt.Errorf("archive of the hour did not drop its partition: %+v", res)
	}
	env = newActivityEnv()
	env.RegisterActivity(acts)
	if _, err := env.ExecuteActivity(acts.ArchiveHistory, calls.ArchiveHistoryInput{Source: "main"}); err != nil {
		return archiveRun{}, err
	}
	return archiveRun{events: res.Events, bytes: res.Bytes, rate: float64(res.Events) / elapsed.Seconds()}, nil
}

// restoreOnce restores the archived hour into the empty index bench_restore
// (PrepareReindex, then ReindexHour, timed alone) and returns its rate.
func restoreOnce(ctx context.Context, idx, src *testsuite.Server, dir string, hour time.Time) (float64, error) {
	if err := idx.Exec(ctx, "DROP DATABASE IF EXISTS bench_restore", "CREATE DATABASE bench_restore"); err != nil {
		return 0, err
	}
	store, err := index.Open(ctx, idx.DSN("bench_restore"))
	if err != nil {
		return 0, err
	}
	defer store.Close()
	if err := store.Init(ctx); err != nil {
		return 0, err
	}
	acts, err := benchActivities(store, src, dir)
	if err != nil {
		return 0, err
	}
	env := newActivityEnv()
	env.RegisterActivity(acts)
	val, err := env.ExecuteActivity(acts.PrepareReindex, calls.PrepareReindexInput{Source: "main"})
	if err != nil {
		return 0, err
	}
	var prep calls.PrepareReindexResult
	if err := val.Get(&prep); err != nil {
		return 0, err
	}
	if len(prep.Hours) != 1 {
		return 0, fmt.Errorf("restore found %d archive files", len(prep.Hours))
	}
	env = newActivityEnv()
	env.RegisterActivity(acts)
	began := time.Now()
	val, err = env.ExecuteActivity(acts.ReindexHour, calls.ReindexHourInput{Source: "main", Hour: hour, Object: prep.Hours[0].Object})
	elapsed := time.Since(began)
	if err != nil {
		return 0, err
	}
	var res calls.ReindexHourResult
	if err := val.Get(&res); err != nil {
		return 0, err
	}
	if n, err := store.CountEvents(ctx, "main"); err != nil || n != res.Events || !res.Done {
		return 0, fmt.Errorf("restored %d events of %d (done %v): %v", n, res.Events, res.Done, err)
	}
	return float64(res.Events) / elapsed.Seconds(), nil
}

// benchActivities are activities on store with a local folder store under
// dir as the archive location.
func benchActivities(store *index.Store, src *testsuite.Server, dir string) (*activities.Activities, error) {
	remote, err := storage.NewLocal(filepath.Join(dir, "store"))
	if err != nil {
		return nil, err
	}
	return &activities.Activities{Sources: map[string]activities.Source{"main": {Name: "main", DSN: src.DSN("")}},
		Index: store, WorkDir: filepath.Join(dir, "work"), BackupDir: filepath.Join(dir, "backups"), Remote: remote}, nil
}

func sizeText(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// warmUp runs a first activity in this process: it hashes the executable
// (Temporal's binary checksum), a cost of starting a worker.
func warmUp() {
	warmTemporal.Do(func() {
		noop := func(context.Context) error { return nil }
		env := newActivityEnv()
		env.RegisterActivity(noop)
		env.ExecuteActivity(noop)
	})
}
