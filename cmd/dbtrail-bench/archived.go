package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dbtrail/dbtrail/internal/archive"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
	"github.com/dbtrail/dbtrail/testsuite"
)

// Sizes of the archived benchmarks.
const (
	// archivedRebuildHours is how many archived hours hold the rebuild's
	// changes.
	archivedRebuildHours = 4
	// historyHours and historyTables are the history workload's hours and
	// equally busy tables; historyKeyTable is the table whose key is read.
	historyHours    = 24
	historyTables   = 20
	historyKeyTable = historyTables / 2
	// archivedRounds is how many times each timed run is repeated, the
	// variants taking turns (best counts); historyRounds for the shorter
	// history runs.
	archivedRounds = 3
	historyRounds  = 5
)

// benchArchived measures the two readers of archived hours of issue 18,
// every read through moment.Past, the archive on a local folder store and
// on a real S3 server (versitygw on loopback), each holding the same files
// (written by the ArchiveHour activity, confirmed, their events dropped
// from the index):
//
//   - the rebuild of a table of rows rows at a moment T after rows/10
//     changes, all in archived hours, against the same rebuild of a source
//     whose same changes are in the index;
//   - the history of one key (moment.RowHistory) across 24 archived hours
//     of a 20-table workload of rows/20 events an hour, against reading
//     those hours whole.
func benchArchived(ctx context.Context, rows int) ([]result, error) {
	if rows < 1000 {
		return nil, fmt.Errorf("archived: --archived-rows %d is below 1,000", rows)
	}
	env, dir, stop, err := startRefreshEnv(ctx, "archived")
	if err != nil {
		return nil, err
	}
	defer stop()
	srv, err := testsuite.StartS3Server(ctx, testsuite.S3Options{Dir: filepath.Join(dir, "s3")})
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	reqs := &countingTransport{next: http.DefaultTransport}
	s3, err := storage.Open(ctx, srv.URL("archive"), storage.Options{HTTPClient: &http.Client{Transport: reqs}})
	if err != nil {
		return nil, err
	}
	local, err := storage.NewLocal(filepath.Join(dir, "store"))
	if err != nil {
		return nil, err
	}
	stores := []archivedStore{{"S3", s3, reqs}, {"local folder", local, nil}}
	cpu := func() time.Duration {
		self, err := testsuite.PIDCPUTime(os.Getpid())
		if err != nil {
			slog.Warn("benchmark cannot read its CPU time", slog.String("error", err.Error()))
		}
		gw, err := srv.CPUTime()
		if err != nil {
			slog.Warn("benchmark cannot read versitygw's CPU time", slog.String("error", err.Error()))
		}
		return self + gw + serverCPU(env.idx)
	}
	out, err := benchArchivedRebuild(ctx, env, dir, stores, cpu, rows)
	if err != nil {
		return nil, err
	}
	more, err := benchArchivedHistory(ctx, env, stores, rows/20)
	return append(out, more...), err
}

// benchArchivedRebuild builds two sources with the same table of n rows
// at seq 0 and the same n/10 changes spread over archivedRebuildHours past
// hours; the changes of the second source are archived. It rebuilds the
// table at the last change's seq from the index and from each store,
// taking turns, archivedRounds times; every rebuild must give the same
// rows. Beside each run's time it measures the CPU time cpu reports
// (this process, the index server and versitygw): on a machine shared
// with other work, times vary by tens of percent, CPU times far less.
func benchArchivedRebuild(ctx context.Context, env *refreshEnv, dir string, stores []archivedStore, cpu func() time.Duration, n int) ([]result, error) {
	k := n / 10
	hours := pastHours(96*time.Hour, archivedRebuildHours)
	began := time.Now()
	var fixtures []*refreshFixture
	for _, source := range []string{"in-index", "archived"} {
		tb, err := env.buildSource(source, n)
		if err != nil {
			return nil, err
		}
		if err := env.insertWindowAt(ctx, tb, k, hourCommit(hours, k)); err != nil {
			return nil, err
		}
		if err := momentFacts(ctx, env, tb, tb.windows[k]); err != nil {
			return nil, err
		}
		fixtures = append(fixtures, tb)
	}
	inIndex, archived := fixtures[0], fixtures[1]
	bytes, err := env.archiveHours(ctx, archived.source, hours, stores)
	if err != nil {
		return nil, err
	}
	if left, err := env.store.CountEvents(ctx, archived.source); err != nil || left != 0 {
		return nil, fmt.Errorf("archived source keeps %d events in the index, want none: %v", left, err)
	}
	// T is the last change: a cut inside the last archived hour for the
	// archived source (Past.Lookup finds it there).
	at := "seq:" + strconv.FormatUint(inIndex.windows[k].cut, 10)
	fmt.Fprintf(os.Stderr, "archived: two %d-row tables, %d changes each, one source's in %d archived hours (%s), ready in %s\n",
		n, k, len(hours), sizeText(bytes), time.Since(began).Round(time.Millisecond))

	pastOf := func(tb *refreshFixture, st archivedStore) *rebuildVariant {
		return &rebuildVariant{store: st, past: moment.Past{Source: tb.source, Index: env.store, SourceDir: env.sourceDir(tb.source), Archive: st.store}}
	}
	vs := []*rebuildVariant{pastOf(inIndex, stores[0])}
	vs[0].name = "index"
	for _, st := range stores {
		vs = append(vs, pastOf(archived, st))
		vs[len(vs)-1].name = st.name
	}
	if err := runRebuilds(ctx, vs, filepath.Join(dir, "work"), at, cpu, n); err != nil {
		return nil, err
	}
	note := func(v *rebuildVariant) string {
		return fmt.Sprintf("moment.Past: Plan (cut, snapshot, schema) + Rebuilder, the table at T written as a table file; best of %d (%s s), taking turns; CPU %.2f s (best; bench + index server + versitygw); %d S3 requests",
			archivedRounds, strings.Join(v.all, ", "), v.bestCPU.Seconds(), v.reqs)
	}
	out := []result{
		{"archived: rebuild table rows / changes", fmt.Sprintf("%s / %s", thousands(n), thousands(k)), "",
			fmt.Sprintf("the refresh benchmark's table, its table file at seq 0; the changes spread over %d past hours; T is the last change (seq), a cut inside the last archived hour", len(hours))},
		{fmt.Sprintf("archived: rebuild at T, %s changes in the index", thousands(k)), fmtRun(vs[0].best), "", note(vs[0])},
	}
	for _, v := range vs[1:] {
		out = append(out, result{fmt.Sprintf("archived: rebuild at T, the changes in %d archived hours on %s", len(hours), v.name), fmtRun(v.best), "",
			note(v) + fmt.Sprintf("; %s of hour files", sizeText(bytes))})
	}
	for _, v := range vs[1:] {
		ratio := v.best.elapsed.Seconds() / vs[0].best.elapsed.Seconds()
		cpuRatio := v.bestCPU.Seconds() / vs[0].bestCPU.Seconds()
		out = append(out, judged("archived: ratio rebuild archived ("+v.name+") / index", fmt.Sprintf("%.2f", ratio),
			fmt.Sprintf("best times; CPU time ratio %.2f", cpuRatio), measured(ratio, atMost(1.3, "%.1f"))))
	}
	return out, nil
}

// rebuildVariant is one source of the rebuild's table (the index, or an
// archive location) and its figures.
type rebuildVariant struct {
	name    string
	store   archivedStore
	past    moment.Past
	best    refreshRun
	bestCPU time.Duration
	reqs    int64    // S3 requests of the last run
	all     []string // every run's time
}

// runRebuilds rebuilds app.t at at from every variant, archivedRounds
// times, the variants taking turns (their order rotates), in one fold
// engine under work. Every rebuild must give the same n rows.
func runRebuilds(ctx context.Context, vs []*rebuildVariant, work, at string, cpu func() time.Duration, n int) error {
	eng, err := openEngine(ctx, filepath.Join(work, "archived-engine"))
	if err != nil {
		return err
	}
	defer eng.Close()
	var want snapshot.Fingerprint
	for round := range archivedRounds {
		for j := range vs {
			v := vs[(round+j)%len(vs)]
			var r refreshRun
			var res snapshot.WriteResult
			c0, q0 := cpu(), v.store.reqs.requests()
			err := labeled(ctx, "rebuild "+v.name, func(ctx context.Context) (err error) {
				r, res, err = rebuildWith(ctx, v.past, eng, at, filepath.Join(work, "rebuilt.parquet"))
				return err
			})
			if err != nil {
				return fmt.Errorf("rebuild of %s at %s from the %s: %w", v.past.Source, at, v.name, err)
			}
			c := cpu() - c0
			v.reqs = v.store.reqs.requests() - q0
			if want == (snapshot.Fingerprint{}) {
				want = res.Fingerprint
			}
			if res.Fingerprint != want || res.Rows != int64(n) {
				return fmt.Errorf("rebuild from the %s has %d rows, fingerprint %+v; another had %+v", v.name, res.Rows, res.Fingerprint, want)
			}
			if round == 0 || r.elapsed < v.best.elapsed {
				v.best = r
			}
			if round == 0 || c < v.bestCPU {
				v.bestCPU = c
			}
			v.all = append(v.all, fmt.Sprintf("%.3f", r.elapsed.Seconds()))
		}
	}
	return nil
}

// benchArchivedHistory archives historyHours hours of perHour events of
// historyTables tables and times, on each store, the history of one key
// through moment.Past against reading every event of those hours' files.
func benchArchivedHistory(ctx context.Context, env *refreshEnv, stores []archivedStore, perHour int) ([]result, error) {
	f := historyFixture{source: "history", hours: pastHours(48*time.Hour, historyHours), tables: historyTables, perHr: perHour}
	began := time.Now()
	total, err := f.insert(ctx, env)
	if err != nil {
		return nil, err
	}
	bytes, err := env.archiveHours(ctx, f.source, f.hours, stores)
	if err != nil {
		return nil, err
	}
	recs, err := env.store.Archives(ctx, f.source)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "archived: %d events of %d tables in %d archived hours (%s), ready in %s\n",
		total, f.tables, len(f.hours), sizeText(bytes), time.Since(began).Round(time.Millisecond))
	key, err := env.updateEvent(1, time.Time{}, "", 1, 0, 1) // its PK is the key of row 1
	if err != nil {
		return nil, err
	}
	var out []result
	for _, st := range stores {
		m, err := f.measure(ctx, moment.Past{Source: f.source, Index: env.store, Archive: st.store}, st, recs, key.PK, total)
		if err != nil {
			return nil, err
		}
		ratio := m.hist.Seconds() / m.whole.Seconds()
		out = append(out,
			result{fmt.Sprintf("archived: history of one key, %d archived hours on %s", len(f.hours), st.name), fmt.Sprintf("%.3f s", m.hist.Seconds()), "",
				fmt.Sprintf("moment.RowHistory over moment.Past.Events (as `history --archive-url`): %d changes of %s.%s key %s; best of %d; %d S3 requests",
					len(f.hours), refreshSchema, historyTable(historyKeyTable), key.PK, historyRounds, m.histReqs)},
			result{fmt.Sprintf("archived: read those %d hours whole on %s", len(f.hours), st.name), fmt.Sprintf("%.3f s", m.whole.Seconds()), "",
				fmt.Sprintf("%s events of %d equally busy tables, %s; every file opened and read (archive.Reader.Events); best of %d, taking turns with the history; %d S3 requests",
					thousands(total), f.tables, sizeText(bytes), historyRounds, m.wholeReqs)},
			judged("archived: ratio history / whole hours ("+st.name+")", fmt.Sprintf("%.3f", ratio), "", measured(ratio, atMost(0.15, "%.2f"))),
		)
	}
	return out, nil
}

// historyFigures are the history benchmark's measures on one store: the
// best times of the history and of reading the hours whole, and the S3
// requests of each (0 on a local folder).
type historyFigures struct {
	hist, whole         time.Duration
	histReqs, wholeReqs int64
}

// measure times the history of key through past and the read of every
// event of recs' files on st, taking turns, historyRounds times. The
// history must find one change an hour, the read all total events.
func (f historyFixture) measure(ctx context.Context, past moment.Past, st archivedStore, recs []change.Archive, key string, total int) (historyFigures, error) {
	var m historyFigures
	table := historyTable(historyKeyTable)
	for round := range historyRounds {
		var h, w time.Duration
		var n int
		var events int64
		q0 := st.reqs.requests()
		err := labeled(ctx, "history "+st.name, func(ctx context.Context) (err error) {
			h, n, err = timeHistory(ctx, past, table, key)
			return err
		})
		if err != nil {
			return m, err
		}
		if n != len(f.hours) {
			return m, fmt.Errorf("history of %s.%s key %s on %s: %d changes, want %d", refreshSchema, table, key, st.name, n, len(f.hours))
		}
		q1 := st.reqs.requests()
		err = labeled(ctx, "whole "+st.name, func(ctx context.Context) (err error) {
			w, events, err = timeWhole(ctx, st.store, recs)
			return err
		})
		if err != nil {
			return m, err
		}
		if events != int64(total) {
			return m, fmt.Errorf("the archived hours on %s hold %d events, %d were archived", st.name, events, total)
		}
		m.histReqs, m.wholeReqs = q1-q0, st.reqs.requests()-q1
		if round == 0 || h < m.hist {
			m.hist = h
		}
		if round == 0 || w < m.whole {
			m.whole = w
		}
	}
	return m, nil
}

// timeHistory reads the history of key of app.table through past and
// returns its time and its number of changes.
func timeHistory(ctx context.Context, past moment.Past, table, key string) (time.Duration, int, error) {
	began := time.Now()
	n := 0
	err := moment.RowHistory(ctx, past.Events(), past.Source, refreshSchema, table, key, func(change.Event) error {
		n++
		return nil
	})
	return time.Since(began), n, err
}

// timeWhole opens every archive file of recs on st and reads all its
// events, and returns the time and the number of events.
func timeWhole(ctx context.Context, st storage.Store, recs []change.Archive) (time.Duration, int64, error) {
	began := time.Now()
	var n int64
	for _, r := range recs {
		ra, err := st.OpenReaderAt(ctx, r.Object)
		if err != nil {
			return 0, 0, err
		}
		rd, err := archive.NewReader(io.NewSectionReader(ra, 0, ra.Size()), ra.Size(), r.Object)
		if err == nil {
			err = rd.Events(func(change.Event) error { n++; return nil })
		}
		ra.Close()
		if err != nil {
			return 0, 0, err
		}
	}
	return time.Since(began), n, nil
}

// labeled runs fn with the profiler label bench=name (on fn's goroutine
// and those it starts), so that a --cpuprofile of the run can be cut to
// one timed run: go tool pprof -tagfocus 'bench=rebuild S3'.
func labeled(ctx context.Context, name string, fn func(ctx context.Context) error) error {
	var err error
	pprof.Do(ctx, pprof.Labels("bench", name), func(ctx context.Context) { err = fn(ctx) })
	return err
}

// countingTransport counts the HTTP requests of an S3 store.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.next.RoundTrip(r)
}

// requests is how many requests t has sent so far; 0 for nil.
func (t *countingTransport) requests() int64 {
	if t == nil {
		return 0
	}
	return t.n.Load()
}
