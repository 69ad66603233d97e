package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workflows"
)

// fullBackup runs a FullBackup on cfg's queue and checks it took every
// table.
func (e *scaleEnv) fullBackup(ctx context.Context, cfg *scaleConfig) error {
	began := time.Now()
	run, err := temporalclient.StartWorkflow(ctx, e.c, client.StartWorkflowOptions{ID: cfg.queue + "-full", TaskQueue: cfg.queue},
		workflows.FullBackup, payload.FullBackupInput{Source: scaleSource})
	if err != nil {
		return err
	}
	var res workflows.FullBackupResult
	if err := run.Get(ctx, &res); err != nil {
		return fmt.Errorf("full backup on %s: %w", cfg.queue, err)
	}
	cfg.fullDur, cfg.published = time.Since(began), res.SnapshotID
	if res.Tables != e.tables || res.Rows != int64(e.tables*e.rows) {
		return fmt.Errorf("full backup on %s took %d tables, %d rows; want %d, %d", cfg.queue, res.Tables, res.Rows, e.tables, e.tables*e.rows)
	}
	return nil
}

// change writes one change batch on every table: an update of one row in
// scaleUpdateEvery, a delete of one in 1,000 and as many inserts, each
// batch on rows of its own.
func (e *scaleEnv) change(ctx context.Context) error {
	e.batches++
	g := e.batches
	per := max(e.rows/1000, 1)
	db, err := e.src.DB(ctx, "app")
	if err != nil {
		return err
	}
	defer db.Close()
	for i := 1; i <= e.tables; i++ {
		t := scaleTable(i)
		for _, q := range []string{
			fmt.Sprintf("UPDATE %s SET n = n + 1, pad = CONCAT('u%d-', id) WHERE id %% %d = %d", t, g, scaleUpdateEvery, g%scaleUpdateEvery),
			fmt.Sprintf("DELETE FROM %s WHERE id <= %d AND id %% 1000 = %d", t, e.rows, (500+g)%1000),
			fmt.Sprintf("INSERT INTO %s SELECT %d + seq, CONCAT('new-', seq), seq, seq / 7 FROM seq_1_to_%d", t, e.rows+(g-1)*per, per),
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("change batch %d on %s: %w", g, t, err)
			}
		}
	}
	return nil
}

// refresh runs one Refresh on cfg's queue and measures it; one that
// published nothing is an error.
func (e *scaleEnv) refresh(ctx context.Context, cfg *scaleConfig, round int) (scaleRun, error) {
	r, res, err := e.measureRefresh(ctx, cfg, fmt.Sprintf("%s-refresh-%d", cfg.queue, round))
	if err != nil {
		return scaleRun{}, err
	}
	if res.Refused || res.SnapshotID == "" {
		return scaleRun{}, fmt.Errorf("refresh on %s published nothing: %v", cfg.queue, res.Reasons)
	}
	return r, nil
}

// measureRefresh runs one Refresh (workflow id id) on cfg's queue and
// measures it, whatever it decided (a refused one included).
func (e *scaleEnv) measureRefresh(ctx context.Context, cfg *scaleConfig, id string) (scaleRun, workflows.RefreshResult, error) {
	var res workflows.RefreshResult
	before, err := e.cpuNow(cfg)
	if err != nil {
		return scaleRun{}, res, err
	}
	began := time.Now()
	run, err := temporalclient.StartWorkflow(ctx, e.c, client.StartWorkflowOptions{ID: id, TaskQueue: cfg.queue},
		workflows.Refresh, payload.RefreshInput{Source: scaleSource, TableDeltas: true})
	if err != nil {
		return scaleRun{}, res, err
	}
	if err := run.Get(ctx, &res); err != nil {
		return scaleRun{}, res, fmt.Errorf("refresh on %s: %w", cfg.queue, err)
	}
	elapsed := time.Since(began)
	after, err := e.cpuNow(cfg)
	if err != nil {
		return scaleRun{}, res, err
	}
	r := after.minus(before)
	r.elapsed, r.downloaded, r.stale = elapsed, res.Downloaded, res.Prev != cfg.published
	if res.SnapshotID != "" {
		cfg.published = res.SnapshotID
	}
	for _, line := range res.Tables {
		if strings.Contains(line, ": rewrite") {
			r.rewritten++
		}
	}
	if err := e.readHistory(ctx, cfg, run, &r); err != nil {
		return scaleRun{}, res, err
	}
	return r, res, nil
}

// cpuNow reads the CPU time of every measured process and of the machine.
func (e *scaleEnv) cpuNow(cfg *scaleConfig) (scaleRun, error) {
	var r scaleRun
	var errs []error
	for _, w := range cfg.workers {
		d, err := testsuite.PIDCPUTime(w.cmd.Process.Pid)
		errs = append(errs, err)
		r.workerCPU = append(r.workerCPU, d)
		r.workerWrites += processWrites(w.cmd.Process.Pid)
	}
	var err error
	r.indexCPU, err = e.idx.CPUTime()
	errs = append(errs, err)
	r.sourceCPU, err = e.src.CPUTime()
	errs = append(errs, err)
	r.s3CPU, err = e.s3.CPUTime()
	errs = append(errs, err)
	r.machine, err = readCPUSample()
	errs = append(errs, err)
	r.benchCPU = testsuite.ProcessCPUTime()
	if err := errors.Join(errs...); err != nil {
		return scaleRun{}, fmt.Errorf("read CPU times: %w", err)
	}
	return r, nil
}

// minus is the CPU used between two reads.
func (r scaleRun) minus(o scaleRun) scaleRun {
	d := scaleRun{indexCPU: r.indexCPU - o.indexCPU, sourceCPU: r.sourceCPU - o.sourceCPU, s3CPU: r.s3CPU - o.s3CPU,
		benchCPU: r.benchCPU - o.benchCPU, workerWrites: r.workerWrites - o.workerWrites, machine: r.machine.minus(o.machine)}
	for i := range r.workerCPU {
		d.workerCPU = append(d.workerCPU, r.workerCPU[i]-o.workerCPU[i])
	}
	return d
}

// workersCPU is the CPU time of every worker of the configuration.
func (r scaleRun) workersCPU() time.Duration {
	var t time.Duration
	for _, d := range r.workerCPU {
		t += d
	}
	return t
}

// measuredCPU is the CPU time of every process the run measured.
func (r scaleRun) measuredCPU() time.Duration {
	return r.workersCPU() + r.indexCPU + r.sourceCPU + r.s3CPU + r.benchCPU
}

// scaleStep is the time from the first start to the last completion of
// one activity type in a run, and how many ran.
type scaleStep struct {
	name        string
	n           int
	first, last time.Time
}

// readHistory reads the run's history into r: the worker whose session ran
// the steps (the last session's, when one was lost), every worker that ran
// one of its activities, and the span of each activity type but the
// session's.
func (e *scaleEnv) readHistory(ctx context.Context, cfg *scaleConfig, run client.WorkflowRun, r *scaleRun) error {
	types := map[int64]string{} // scheduled event id: activity type
	var active []string
	it := e.c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return fmt.Errorf("history of %s: %w", run.GetID(), err)
		}
		at := ev.GetEventTime().AsTime()
		switch {
		case ev.GetActivityTaskScheduledEventAttributes() != nil:
			types[ev.GetEventId()] = ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
		case ev.GetActivityTaskStartedEventAttributes() != nil:
			a := ev.GetActivityTaskStartedEventAttributes()
			w := cfg.workerOf(a.GetIdentity())
			name := types[a.GetScheduledEventId()]
			if name == sessionCreationActivity {
				r.host = w
			}
			if strings.HasPrefix(name, sessionActivityPrefix) {
				continue
			}
			if !slices.Contains(active, w) {
				active = append(active, w)
			}
			if name == "RefreshTable" {
				if r.tables == nil {
					r.tables = map[string]int{}
				}
				r.tables[w]++
			}
			i := slices.IndexFunc(r.steps, func(s scaleStep) bool { return s.name == name })
			if i < 0 {
				r.steps = append(r.steps, scaleStep{name: name, first: at})
				i = len(r.steps) - 1
			}
			r.steps[i].n++
		case ev.GetActivityTaskCompletedEventAttributes() != nil:
			name := types[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()]
			for i := range r.steps {
				if r.steps[i].name == name {
					r.steps[i].last = at
				}
			}
		}
	}
	slices.Sort(active)
	r.active = active
	return nil
}

// stepsText is "PlanRefresh 0.12, RefreshTable ×20 1.50, ..., other 0.40"
// (seconds): each step's span, and the rest of the run's time outside
// every span (workflow tasks, opening and closing the session,
// scheduling); spans that overlap (a spread refresh adopts tables while
// others fold) count once.
func stepsText(r scaleRun) string {
	var parts []string
	for _, s := range r.steps {
		name := s.name
		if s.n > 1 {
			name += fmt.Sprintf(" ×%d", s.n)
		}
		parts = append(parts, fmt.Sprintf("%s %.2f", name, s.last.Sub(s.first).Seconds()))
	}
	other := r.elapsed - covered(r.steps)
	return strings.Join(append(parts, fmt.Sprintf("other %.2f", other.Seconds())), ", ")
}

// covered is the time inside at least one step's span.
func covered(steps []scaleStep) time.Duration {
	s := slices.Clone(steps)
	slices.SortFunc(s, func(a, b scaleStep) int { return a.first.Compare(b.first) })
	var total time.Duration
	var end time.Time
	for _, st := range s {
		from := st.first
		if from.Before(end) {
			from = end
		}
		if st.last.After(from) {
			total += st.last.Sub(from)
			end = st.last
		}
	}
	return total
}

// cpuSample is the machine's CPU time from /proc/stat, in ticks summed
// over every core.
type cpuSample struct {
	busy, iowait, total int64
}

func (s cpuSample) minus(o cpuSample) cpuSample {
	return cpuSample{busy: s.busy - o.busy, iowait: s.iowait - o.iowait, total: s.total - o.total}
}

// readCPUSample reads the "cpu" line of /proc/stat: busy is every field
// but idle and iowait (guest time is inside user).
func readCPUSample() (cpuSample, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuSample{}, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuSample{}, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var s cpuSample
	for i, v := range f[1:9] { // user nice system idle iowait irq softirq steal
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return cpuSample{}, fmt.Errorf("/proc/stat: %w", err)
		}
		s.total += n
		switch i {
		case 3:
		case 4:
			s.iowait += n
		default:
			s.busy += n
		}
	}
	return s, nil
}

// processWrites is the bytes process pid caused to be written to disk so
// far (/proc/<pid>/io write_bytes), 0 when unreadable.
func processWrites(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "write_bytes: "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}
