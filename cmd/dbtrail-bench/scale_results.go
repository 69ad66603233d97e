package main

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
)

// scaleTarget is the least 1 worker / k workers time ratio that meets
// the scale-out target.
const scaleTarget = 1.6

// best is the fastest run of cfg.
func (cfg *scaleConfig) best() scaleRun {
	return slices.MinFunc(cfg.runs, func(a, b scaleRun) int { return int(a.elapsed - b.elapsed) })
}

// results are the rows of the scale benchmark.
func (e *scaleEnv) results(cfgs []*scaleConfig) []result {
	cores := runtime.NumCPU()
	out := []result{{"scale: tables × rows", fmt.Sprintf("%d × %s", e.tables, thousands(e.rows)), "",
		fmt.Sprintf("each round: per table %s updates (%d%%), %s deletes, %s inserts, captured; then a Refresh (table deltas, Parallel 2) per configuration, order rotating; a warm-up round, then best of %d",
			thousands(e.rows/scaleUpdateEvery), 100/scaleUpdateEvery, thousands(max(e.rows/1000, 1)), thousands(max(e.rows/1000, 1)), e.rounds)}}
	for _, cfg := range cfgs {
		k := len(cfg.workers)
		b := cfg.best()
		out = append(out, result{
			fmt.Sprintf("scale: refresh of %d changed tables × %s rows, %d %s", e.tables, thousands(e.rows), k, plural(k, "worker")),
			fmt.Sprintf("%.2f s, CPU %.1f s", b.elapsed.Seconds(), b.measuredCPU().Seconds()), "", cfg.note(b, cores)})
	}
	one := cfgs[0].best()
	for _, cfg := range cfgs[1:] {
		k := len(cfg.workers)
		b := cfg.best()
		ratio := one.elapsed.Seconds() / b.elapsed.Seconds()
		out = append(out, judged(fmt.Sprintf("scale: ratio time 1 worker / %d workers (a core each)", k), fmt.Sprintf("%.2f", ratio),
			scaleWhy(cfg, b, cores), measured(ratio, atLeast(scaleTarget, "%.1f"))))
		spread, free := scaleCeilings(one, b, cores)
		out = append(out, result{fmt.Sprintf("scale: ceiling of 1 worker / %d workers on %d cores", k, cores) + diagnosis, fmt.Sprintf("%.2f / %.2f", spread, free), "",
			fmt.Sprintf("the 1-worker time ÷ the least time %d cores need for the CPU of the measured processes, with every core busy all the time: of the %d-worker run (%.1f s; %s) / of the 1-worker run (%.1f s, as if spreading cost no CPU: %.3f)",
				cores, k, b.measuredCPU().Seconds(), ceilingSays(spread, scaleTarget), one.measuredCPU().Seconds(), free)})
	}
	return out
}

// scaleCeilings are the highest 1-worker / k-worker ratios that cores
// allow: a run cannot take less than its measured CPU divided by the
// cores, so the k-worker run's own CPU bounds the ratio (spread), and
// the 1-worker run's CPU bounds it even if spreading cost nothing (free).
func scaleCeilings(one, k scaleRun, cores int) (spread, free float64) {
	least := func(r scaleRun) float64 { return r.measuredCPU().Seconds() / float64(cores) }
	if least(k) > 0 {
		spread = one.elapsed.Seconds() / least(k)
	}
	if least(one) > 0 {
		free = one.elapsed.Seconds() / least(one)
	}
	return spread, free
}

// note describes the best run of cfg: every run's time and host, the CPU
// of each process, the machine's load and what bound the run.
func (cfg *scaleConfig) note(b scaleRun, cores int) string {
	var times, hosts []string
	downloads, stale := 0, 0
	for _, r := range cfg.runs {
		if r.stale {
			stale++
		}
		times = append(times, fmt.Sprintf("%.2f", r.elapsed.Seconds()))
		hosts = append(hosts, r.host)
		if r.downloaded != "" {
			downloads++
		}
	}
	var per []string
	for i, d := range b.workerCPU {
		per = append(per, fmt.Sprintf("%s %.2f", cfg.workers[i].pinned(), d.Seconds()))
	}
	s := fmt.Sprintf("runs %s s; session on %s; best: steps s %s; CPU s workers %.2f (%s), index %.2f, source %.2f, S3 %.2f, Temporal+capture %.2f; ",
		strings.Join(times, " / "), strings.Join(hosts, ", "), stepsText(b), b.workersCPU().Seconds(), strings.Join(per, ", "),
		b.indexCPU.Seconds(), b.sourceCPU.Seconds(), b.s3CPU.Seconds(), b.benchCPU.Seconds())
	s += fmt.Sprintf("%s; workers wrote %.0f MiB", boundBy(b, cores), mib(b.workerWrites))
	if downloads > 0 {
		s += fmt.Sprintf("; %d of %d runs downloaded the previous snapshot", downloads, len(cfg.runs))
	}
	if stale > 0 {
		s += fmt.Sprintf("; %d of %d runs started from an older snapshot than the last published (their worker's folder was behind)", stale, len(cfg.runs))
	}
	if b.rewritten > 0 {
		s += fmt.Sprintf("; %d tables rewritten", b.rewritten)
	}
	return s + fmt.Sprintf("; full backup %.1f s", cfg.fullDur.Seconds())
}

// boundBy says how busy the machine's cores were over the run: the
// measured processes' CPU over wall × cores, the machine's busy and iowait
// fractions (every process, the machine being shared), and which resource
// that points at.
func boundBy(r scaleRun, cores int) string {
	capacity := r.elapsed.Seconds() * float64(cores)
	busy := r.measuredCPU().Seconds() / capacity
	var mBusy, mWait float64
	if r.machine.total > 0 {
		mBusy, mWait = float64(r.machine.busy)/float64(r.machine.total), float64(r.machine.iowait)/float64(r.machine.total)
	}
	what := "neither CPU nor disk saturated: the run waits on its own steps"
	switch {
	case busy >= 0.8:
		what = "CPU-bound by the measured processes"
	case mBusy >= 0.9:
		what = fmt.Sprintf("the cores were full, %.0f%% of them with processes outside the benchmark (shared machine)", (mBusy-busy)*100)
	case mWait >= 0.25:
		what = "disk-bound"
	}
	return fmt.Sprintf("measured CPU busy %.0f%% of %d cores (machine %.0f%%, iowait %.0f%%): %s", busy*100, cores, mBusy*100, mWait*100, what)
}

// scaleWhy explains a ratio: where the best run's session ran, what the
// other workers did meanwhile, and what bound the run.
func scaleWhy(cfg *scaleConfig, b scaleRun, cores int) string {
	var idle []string
	for i, w := range cfg.workers {
		if w.name != b.host {
			idle = append(idle, fmt.Sprintf("%s %.2f s", w.name, b.workerCPU[i].Seconds()))
		}
	}
	s := fmt.Sprintf("the session on %s; tables (RefreshTable attempts) per worker %s; CPU of the others %s",
		b.host, tablesText(cfg, b), strings.Join(idle, ", "))
	switch {
	case b.downloaded != "":
		s += "; that worker first downloaded the previous snapshot"
	case b.stale:
		s += "; that worker's folder was behind: it refreshed from an older snapshot (a longer window)"
	}
	return s + "; " + boundBy(b, cores)
}

// tablesText is "k2/w1 21, k2/w2 19": the RefreshTable attempts of run r
// per worker of cfg.
func tablesText(cfg *scaleConfig, r scaleRun) string {
	var parts []string
	for _, w := range cfg.workers {
		parts = append(parts, fmt.Sprintf("%s %d", w.name, r.tables[w.name]))
	}
	return strings.Join(parts, ", ")
}

// pinned is the worker's name with the core it is pinned to.
func (w *scaleWorker) pinned() string {
	if w.core < 0 {
		return w.name + " (unpinned)"
	}
	return fmt.Sprintf("%s (core %d)", w.name, w.core)
}
