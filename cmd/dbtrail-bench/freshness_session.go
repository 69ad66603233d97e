package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/moment"
	tailpkg "github.com/dbtrail/dbtrail/internal/tail"
	"github.com/dbtrail/dbtrail/internal/views"
)

// freshAskEvery is how often the session poller asks its question.
const freshAskEvery = time.Second

// sessionPolls are the session poller's measures: each question's answer
// time and the tail's events, and how many of them the tail cache held.
type sessionPolls struct {
	wall           []time.Duration
	events, cached []int64
	// prepare, staging: the tail's preparing (cut, plan, counts) and
	// staging of each question; reload: loading the views at the new cut
	// (preparing included).
	prepare, staging, reload []time.Duration
	// files: the window files of every question; overlayReads: those the
	// session read into its overlays (the rest it had folded before).
	files, overlayReads int
}

// pollSession asks the question naming every table (freshQueries[modeAll])
// every freshAskEvery on one views session with the live tail and a tail
// cache, as the query shell or the SQL port does with their default two
// DuckDB threads (each question at the newest captured transaction), until traffic is closed,
// then until it saw every marker or for freshDrain at most. A question
// that takes longer than freshAskEvery delays the next.
func (e *freshEnv) pollSession(ctx context.Context, traffic <-chan struct{}, m *markers, p *sessionPolls) error {
	tmp := filepath.Join(e.dir, "session-tmp")
	cache, err := tailpkg.NewCache(tmp, tailpkg.DefaultCacheBytes)
	if err != nil {
		return err
	}
	defer cache.Close()
	src := filepath.Join(e.acts.BackupDir, freshSource)
	var st *tailpkg.State
	r := &tailpkg.Reader{Past: moment.Past{Source: freshSource, Index: e.store, SourceDir: src}, MemoryLimit: "512MB", Cache: cache}
	s, err := views.OpenSession(ctx, views.SessionOptions{Options: views.Options{SourceDir: src}, MemoryLimit: "512MB", Threads: 2,
		TempDir: tmp, Sandbox: true, Tail: r.ViewsTail(func(prepared *tailpkg.State) { st = prepared })})
	if err != nil {
		return err
	}
	defer s.Close()
	tick := time.NewTicker(freshAskEvery)
	defer tick.Stop()
	var stopped time.Time
	for first := true; ; first = false {
		select {
		case <-traffic:
			if stopped.IsZero() {
				stopped = time.Now()
			}
			if m.allSeen(modeSession) || time.Since(stopped) > freshDrain {
				return nil
			}
		default:
		}
		if !first {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-tick.C:
			}
		}
		start := time.Now()
		newest, reload, err := e.askSession(ctx, s)
		if err != nil {
			return err
		}
		end := time.Now()
		m.saw(modeSession, newest, end)
		p.wall = append(p.wall, end.Sub(start))
		p.events = append(p.events, st.Staged)
		p.cached = append(p.cached, st.Cached)
		p.prepare = append(p.prepare, st.Took)
		p.reload = append(p.reload, reload)
		p.staging = append(p.staging, st.Staging)
		for _, w := range st.Views.Windows {
			p.files += len(w.Paths)
		}
		p.overlayReads = s.OverlayReads()
		if path := os.Getenv("DBTRAIL_BENCH_EXPLAIN"); path != "" && len(p.wall) == 12 {
			explain(ctx, s, path)
		}
	}
}

// askSession loads the views at the newest captured transaction and asks
// the question naming every table; it returns the newest marker seen and
// how long loading the views took.
func (e *freshEnv) askSession(ctx context.Context, s *views.Session) (int, time.Duration, error) {
	start := time.Now()
	if _, err := s.Reload(ctx); err != nil {
		return 0, 0, fmt.Errorf("session: reload: %w", err)
	}
	reload := time.Since(start)
	if os.Getenv("DBTRAIL_BENCH_SPLIT") != "" {
		// A developer's split: an EXPLAIN stages the tables, folds their
		// overlays and plans; the statement then only runs.
		plan := time.Now()
		if r, _, err := s.Query(ctx, "EXPLAIN "+freshQueries[modeAll]); err == nil {
			r.Close()
		}
		fmt.Fprintf(os.Stderr, "freshness: session split: reload %.3f s, stage+overlays+plan %.3f s", reload.Seconds(), time.Since(plan).Seconds())
		defer func(run time.Time) { fmt.Fprintf(os.Stderr, ", run %.3f s\n", time.Since(run).Seconds()) }(time.Now())
	}
	rows, _, err := s.Query(ctx, freshQueries[modeAll])
	if err != nil {
		return 0, 0, fmt.Errorf("session: %w", err)
	}
	defer rows.Close()
	var newest, n int64
	for rows.Next() {
		if err := rows.Scan(&newest, &n); err != nil {
			return 0, 0, err
		}
	}
	if err := rows.Err(); err != nil {
		return 0, 0, err
	}
	return int(newest), reload, nil
}

// sessionResult is the session poller's row (its own phase of traffic at
// rate tx/s achieved): the answer time and commit-to-visible p50, judged
// (≤ 1 s and ≤ 2 s), beside a new process per question without the cache
// (modeAll, in the first phase).
func sessionResult(m *markers, p *sessionPolls, rate float64, perProcess time.Duration) result {
	name := "freshness: a query naming every table asked every second by one session with the tail cache (answer p50 / commit-to-visible p50)"
	if len(p.wall) == 0 {
		return judged(name, "no answer", "", cond("a question answered", false))
	}
	answer := medianOf(p.wall)
	var statement []time.Duration // the statement's own: its answer less loading and staging
	for i := range p.wall {
		statement = append(statement, p.wall[i]-p.reload[i]-p.staging[i])
	}
	med := func(d []time.Duration) float64 { return medianOf(d).Seconds() }
	lat, missed := m.latencies(modeSession)
	var visible time.Duration
	if len(lat) > 0 {
		visible = lat[len(lat)/2]
	}
	var events, cached int64
	for i := range p.events {
		events += p.events[i]
		cached += p.cached[i]
	}
	note := fmt.Sprintf("a phase of its own, the workload at %.0f tx/s: %d questions (max %.1f s; at the median loading the views at the new cut %.2f s of which the tail's cut, plan and counts %.2f s, staging %.2f s, the statement in DuckDB %.2f s), %d markers seen, %d not; the tail's events read from the cache: %.0f%% (%s of %s); window files read into the session's overlays: %d of the questions' %d; a new dbtrail query process per question without the cache (first phase): %.1f s at the median (%.1fx the session's)",
		rate, len(p.wall), slices.Max(p.wall).Seconds(), med(p.reload), med(p.prepare), med(p.staging), med(statement), len(lat), missed, 100*float64(cached)/float64(max(events, 1)),
		thousands(int(cached)), thousands(int(events)), p.overlayReads, p.files, perProcess.Seconds(), perProcess.Seconds()/max(answer.Seconds(), 0.001))
	return judged(name, fmt.Sprintf("%.2f s / %.1f s", answer.Seconds(), visible.Seconds()), note,
		measured(answer.Seconds(), atMost(1, "%.0f s").of("answer p50")), measured(visible.Seconds(), atMost(2, "%.0f s").of("commit-to-visible p50")),
		cond("every marker seen ("+strconv.Itoa(missed)+" not)", missed == 0 && len(lat) > 0))
}

// explain writes EXPLAIN ANALYZE of the session's question to path (a
// profile for a developer: DBTRAIL_BENCH_EXPLAIN=path).
func explain(ctx context.Context, s *views.Session, path string) {
	rows, _, err := s.Query(ctx, "EXPLAIN ANALYZE "+freshQueries[modeAll])
	if err != nil {
		os.WriteFile(path, []byte(err.Error()), 0o600)
		return
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			b.WriteString(err.Error())
			break
		}
		b.WriteString(k + "\n" + v + "\n")
	}
	os.WriteFile(path, []byte(b.String()), 0o600)
}
