package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// markers are the marker rows: when each committed, and when each was
// first seen by a query with the tail and by one without.
type markers struct {
	mu     sync.Mutex
	commit map[int]time.Time
	seen   [freshModes]map[int]time.Time // by poll mode
	next   int
}

func newMarkers() *markers {
	m := &markers{commit: map[int]time.Time{}, next: 1}
	for i := range m.seen {
		m.seen[i] = map[int]time.Time{}
	}
	return m
}

// write commits a marker row every freshMarkerEvery until ctx ends.
func (m *markers) write(ctx context.Context, db markerDB) error {
	t := time.NewTicker(freshMarkerEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		m.mu.Lock()
		id := m.next
		m.next++
		m.mu.Unlock()
		if _, err := db.ExecContext(ctx, "INSERT INTO fresh_marker VALUES (?, 'marker')", id); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("marker %d: %w", id, err)
		}
		m.mu.Lock()
		m.commit[id] = time.Now()
		m.mu.Unlock()
	}
}

// saw records that a query of mode that ended at when saw every marker up
// to max. A marker whose commit is not recorded yet counts at a later
// query.
func (m *markers) saw(mode int, max int, when time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, c := range m.commit {
		if _, ok := m.seen[mode][id]; !ok && id <= max && !when.Before(c) {
			m.seen[mode][id] = when
		}
	}
}

// allSeen reports whether mode saw every committed marker.
func (m *markers) allSeen(mode int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.seen[mode]) == len(m.commit)
}

// latencies returns the commit-to-visible times of mode's markers, sorted,
// and how many committed markers were never seen.
func (m *markers) latencies(mode int) ([]time.Duration, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []time.Duration
	missed := 0
	for id, c := range m.commit {
		if s, ok := m.seen[mode][id]; ok {
			out = append(out, s.Sub(c))
		} else {
			missed++
		}
	}
	slices.Sort(out)
	return out, missed
}

// freshLoad counts the workload's transactions and statements.
type freshLoad struct {
	txns, stmts atomic.Int64
}

// pacedWriters runs the interleaved workload's writers ws (oltp.go) on
// oltpConns connections, rate transactions a second in all, until ctx
// ends. A writer behind its pace runs back to back.
func pacedWriters(ctx context.Context, db *sql.DB, ws []*oltpWriter, rate int, load *freshLoad) error {
	g, gctx := errgroup.WithContext(ctx)
	interval := time.Duration(float64(time.Second) * oltpConns / float64(rate))
	for k, w := range ws {
		g.Go(func() error {
			conn, err := writerConn(gctx, db, k)
			if err != nil {
				return err
			}
			defer conn.Close()
			next := time.Now()
			for {
				if d := time.Until(next); d > 0 {
					select {
					case <-gctx.Done():
						return nil
					case <-time.After(d):
					}
				}
				next = next.Add(interval)
				stmts := w.next()
				if err := execTransaction(gctx, conn, stmts); err != nil {
					if gctx.Err() != nil {
						return nil
					}
					return fmt.Errorf("writer %d, transaction %d: %w", k, w.txns, err)
				}
				load.txns.Add(1)
				load.stmts.Add(int64(len(stmts)))
			}
		})
	}
	return g.Wait()
}

// Poll modes: the marker query with the tail, the same with --tail=false,
// and a query naming every table with the tail (every changed table's
// changes staged).
const (
	modeTail = iota
	modeSnapshot
	modeAll
	modeSession // freshness_session.go
	freshModes
)

// freshQueries are the polls' statements by mode.
var freshQueries = [freshModes]string{
	"SELECT coalesce(max(id), 0) AS m FROM tpcc.fresh_marker",
	"SELECT coalesce(max(id), 0) AS m FROM tpcc.fresh_marker",
	"SELECT (SELECT coalesce(max(id), 0) FROM tpcc.fresh_marker) AS m, " +
		"(SELECT count(*) FROM tpcc.warehouse) + (SELECT count(*) FROM tpcc.district) + (SELECT count(*) FROM tpcc.customer) + " +
		"(SELECT count(*) FROM tpcc.history) + (SELECT count(*) FROM tpcc.new_orders) + (SELECT count(*) FROM tpcc.orders) + " +
		"(SELECT count(*) FROM tpcc.order_line) + (SELECT count(*) FROM tpcc.item) + (SELECT count(*) FROM tpcc.stock) AS n",
	"", // modeSession asks modeAll's question
}

// freshPollers are the two pollers' cycles of modes, running side by side:
// the measure (the marker table with the tail, back to back), and the
// comparisons (the snapshot alone, then every table with the tail), one
// every freshCompareEvery so that they do not starve the workload.
var freshPollers = [][]int{{modeTail}, {modeSnapshot, modeAll}}

// freshCompareEvery is the comparisons' poller's pause between queries.
const freshCompareEvery = 5 * time.Second

// freshDrain is how long the tail's poller goes on after the traffic
// stopped, for the last markers.
const freshDrain = 30 * time.Second

// freshPolls are the measures of the polling queries, by mode.
type freshPolls struct {
	mu     sync.Mutex
	runs   [freshModes]int
	cpu    [freshModes]time.Duration
	wall   [freshModes][]time.Duration
	events [freshModes][]int64 // the tail's events per query
}

// tailEvents finds the tail's size in `dbtrail query`'s cut line.
var tailEvents = regexp.MustCompile(`\+ ([0-9]+) events of [0-9]+ tables`)

// poll runs `dbtrail query` back to back in the modes of cycle, in turn,
// and records which markers each saw, until traffic is closed; then, when
// cycle is the tail's alone, until the tail saw every marker or for
// freshDrain at most.
func (e *freshEnv) poll(ctx context.Context, traffic <-chan struct{}, cycle []int, m *markers, p *freshPolls) error {
	var stopped time.Time
	for i := 0; ; i++ {
		select {
		case <-traffic:
			if stopped.IsZero() {
				stopped = time.Now()
			}
			if len(cycle) > 1 || cycle[0] != modeTail || m.allSeen(modeTail) || time.Since(stopped) > freshDrain {
				return nil
			}
		default:
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if len(cycle) > 1 && i > 0 {
			select {
			case <-traffic:
				return nil
			case <-time.After(freshCompareEvery):
			}
		}
		mode := cycle[i%len(cycle)]
		args := []string{"query", "--backup-dir", e.acts.BackupDir, "--source", freshSource, "--format", "csv",
			"--memory-limit", "512MB", "--threads", "1", "--temp-dir", filepath.Join(e.dir, "query-tmp")}
		if mode == modeSnapshot {
			args = append(args, "--tail=false")
		}
		args = append(args, freshQueries[mode])
		cmd := exec.Command(e.bin, args...)
		cmd.Env = append(os.Environ(), "DBTRAIL_INDEX_DSN="+e.idx.DSN("dbtrail"))
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("dbtrail query: %w\n%s", err, errOut.String())
		}
		end := time.Now()
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		first, _, _ := strings.Cut(lines[len(lines)-1], ",")
		max, err := strconv.Atoi(first)
		if err != nil {
			return fmt.Errorf("dbtrail query printed %q: %w", out.String(), err)
		}
		m.saw(mode, max, end)
		p.mu.Lock()
		p.runs[mode]++
		p.cpu[mode] += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		p.wall[mode] = append(p.wall[mode], end.Sub(start))
		if mode != modeSnapshot {
			var n int64
			if s := tailEvents.FindStringSubmatch(errOut.String()); s != nil {
				n, _ = strconv.ParseInt(s[1], 10, 64)
			}
			p.events[mode] = append(p.events[mode], n)
		}
		p.mu.Unlock()
	}
}

// freshChecks judge the live tail's commit-to-visible latency: p50 ≤ 5 s
// and max ≤ 15 s over the n markers seen, at least one seen, and every
// marker seen (missed, the markers never visible before the end, have no
// latency: a run that misses any is NOT met, whatever the others took).
func freshChecks(p50, mx time.Duration, n, missed int) []check {
	return []check{measured(p50.Seconds(), atMost(5, "%.0f s").of("p50")), measured(mx.Seconds(), atMost(15, "%.0f s").of("max")),
		cond("a marker seen", n > 0), cond(fmt.Sprintf("every marker seen (%d not)", missed), missed == 0)}
}

// freshResults are the benchmark's rows.
func freshResults(m *markers, load *freshLoad, p *freshPolls, traffic time.Duration, refreshes int, captured int64) []result {
	txRate := float64(load.txns.Load()) / traffic.Seconds()
	secs := func(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
	latency := func(mode int) (p50, mx time.Duration, n, missed int) {
		d, missed := m.latencies(mode)
		if len(d) == 0 {
			return 0, 0, 0, missed
		}
		return d[len(d)/2], d[len(d)-1], len(d), missed
	}
	median := medianOf
	cpu := func(mode int) time.Duration { return p.cpu[mode] / time.Duration(max(p.runs[mode], 1)) }
	// The CPU the tail adds to one query.
	extra := func(mode int) time.Duration { return max(cpu(mode)-cpu(modeSnapshot), 0) }
	events := func(mode int) string {
		ev := slices.Clone(p.events[mode])
		slices.Sort(ev)
		if len(ev) == 0 {
			return "none"
		}
		return fmt.Sprintf("%s at the median, %s at most", thousands(int(ev[len(ev)/2])), thousands(int(ev[len(ev)-1])))
	}
	row := func(mode int, name string, judge bool) result {
		p50, mx, n, missed := latency(mode)
		note := fmt.Sprintf("%d markers seen, %d not seen before the end; %d runs, %s each at the median; the tail held %s events",
			n, missed, p.runs[mode], secs(median(p.wall[mode])), events(mode))
		if mode == modeSnapshot {
			note = fmt.Sprintf("%d markers seen, %d not seen before the end; %d runs, %s each at the median", n, missed, p.runs[mode], secs(median(p.wall[mode])))
		}
		value := secs(p50) + " / " + secs(mx)
		if !judge {
			return result{name, value, "", note}
		}
		return judged(name, value, note, freshChecks(p50, mx, n, missed)...)
	}
	tailExtra, allExtra := extra(modeTail), extra(modeAll)
	// Polling back to back with the marker query alone, the tail's share
	// of the poller's CPU per second of traffic.
	perSec := func(mode int) float64 { return extra(mode).Seconds() / max(median(p.wall[mode]).Seconds(), 0.001) }
	return []result{
		judged("freshness: workload", fmt.Sprintf("%.0f tx/s", txRate),
			fmt.Sprintf("the interleaved workload's transactions (%d connections, %.1f statements each) for %s, a marker row every %s, a Refresh every %s (%d published); %s row events captured",
				oltpConns, float64(load.stmts.Load())/float64(max(load.txns.Load(), 1)), traffic.Round(time.Second),
				freshMarkerEvery, freshRefreshEvery, refreshes, thousands(int(captured))), measured(txRate, atLeast(300, "%.0f tx/s"))),
		row(modeTail, "freshness: commit-to-visible through dbtrail query, live tail (p50 / max)", true),
		row(modeAll, "freshness: commit-to-visible, live tail, a query naming every table (p50 / max)", false),
		row(modeSnapshot, "freshness: commit-to-visible, snapshot alone (--tail=false, p50 / max)", false),
		{"freshness: CPU of one dbtrail query: tail, marker table / tail, every table / snapshot alone",
			fmt.Sprintf("%.2f s / %.2f s / %.2f s", cpu(modeTail).Seconds(), cpu(modeAll).Seconds(), cpu(modeSnapshot).Seconds()), "",
			fmt.Sprintf("user + system of the process; the tail adds %.2f s (marker table) and %.2f s (every table's changes staged)", tailExtra.Seconds(), allExtra.Seconds())},
		{"freshness: CPU the tail costs per second of traffic (marker table / every table)", fmt.Sprintf("%.2f / %.2f s/s", perSec(modeTail), perSec(modeAll)), "",
			"the CPU a query with the tail adds over a snapshot-only one, per second of a poller running such queries back to back (2 cores shared with the source, index, capture, worker and the comparisons' poller)"},
	}
}

// medianOf is the median of d (0 when empty).
func medianOf(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	if len(d) == 0 {
		return 0
	}
	return d[len(d)/2]
}
