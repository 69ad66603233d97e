package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
	temporaltest "go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/dbtrail/dbtrail/activities"
	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/exportdir"
	targetpkg "github.com/dbtrail/dbtrail/internal/target"
	"github.com/dbtrail/dbtrail/payload"
	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/dbtrail/dbtrail/workflows"
)

// restoreChildEnv, when set, makes dbtrail-bench a child that runs one
// Restore workflow (the JSON restoreChildConfig in the variable) with the
// real activities in the SDK's test environment and prints its time: the
// parent reads the child's peak RSS (the worker's, restoring) from its
// rusage.
const restoreChildEnv = "DBTRAIL_BENCH_RESTORE_CHILD"

// childProfileEnv, when set, names the file the restore child writes its
// CPU profile to (each round overwrites it: the last round's is kept).
const childProfileEnv = "DBTRAIL_BENCH_CHILD_CPUPROFILE"

// benchTarget is the name of the benchmark's restore target.
const benchTarget = "bench"

type restoreChildConfig struct {
	DSN, BackupDir, WorkDir string
	In                      payload.RestoreInput
	// Target is the restore target In names.
	Target targetpkg.Target
}

// restoreChildResult is the child's restore: the workflow's time and the
// time of its chunk transactions (the load alone; the first
// 10,000 chunks of each table).
type restoreChildResult struct {
	Nanos, ChunkNanos int64
	Chunks            int
	// Phases is the time of each activity type (the sum of its calls'
	// start to end; calls of one type may overlap), and "stage" the time
	// LoadTable spent staging the rebuilt table.
	Phases map[string]time.Duration
}

// phaseText is "name time, ..." of phases in name order.
func phaseText(phases map[string]time.Duration) string {
	names := make([]string, 0, len(phases))
	for n := range phases {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", n, phases[n].Round(time.Millisecond))
	}
	return b.String()
}

// restoreRounds is how many times each timed load is repeated, the two
// taking turns (best counts).
const restoreRounds = 3

// benchRestore measures the Restore workflow (--parallel 2) loading the
// bench table of rows rows at a moment (a tenth of a percent of its rows
// changed after its snapshot) into a real MariaDB, against the mariadb
// client loading dbtrail's own .sql export of the same table at the same
// moment into the same server. The restore's time covers all of it: the
// rebuild at the moment, the chunked load with its checkpoints, the
// fingerprint verification; the client's only the load of the file. It
// reports the rows/s ratio and the restoring process's peak RSS.
func benchRestore(ctx context.Context, rows int) ([]result, error) {
	if rows < 1000 {
		return nil, fmt.Errorf("restore: --restore-rows %d is below 1,000", rows)
	}
	env, dir, stop, err := startRefreshEnv(ctx, "restore")
	if err != nil {
		return nil, err
	}
	defer stop()
	began := time.Now()
	tb, err := env.buildTable(rows)
	if err != nil {
		return nil, err
	}
	env.acts.Sources[tb.source] = activities.Source{Name: tb.source}
	k := max(rows/1000, 1)
	if err := env.insertWindow(ctx, tb, k); err != nil {
		return nil, err
	}
	last := tb.windows[k]
	if err := momentFacts(ctx, env, tb, last); err != nil {
		return nil, err
	}
	at := "seq:" + strconv.FormatUint(last.cut, 10)
	target, err := testsuite.Start(ctx, testsuite.Options{Role: testsuite.RoleSource, ServerID: 61})
	if err != nil {
		return nil, err
	}
	defer target.Stop()
	pw := filepath.Join(dir, "target.pw")
	if err := os.WriteFile(pw, []byte(target.Password+"\n"), 0o600); err != nil {
		return nil, err
	}
	sqlFile := filepath.Join(dir, "export.sql")
	if err := env.exportSQL(tb, at, sqlFile); err != nil {
		return nil, err
	}
	fi, err := os.Stat(sqlFile)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "restore: %d-row table with %d changes and its .sql export (%s) ready in %s\n",
		rows, k, sizeText(fi.Size()), time.Since(began).Round(time.Millisecond))

	var best, bestClient time.Duration
	var bestRun restoreChildResult
	var peak int64
	for round := range restoreRounds {
		into := fmt.Sprintf("restored_%d", round)
		in := payload.RestoreInput{Parallel: 2, RestoreSpec: payload.RestoreSpec{Source: tb.source, At: at, IntoSchema: into,
			Tables: []string{refreshSchema + "." + refreshTable},
			Target: payload.TargetRef{Name: benchTarget}}}
		rss, run, err := env.restoreChild(ctx, in, targetpkg.Target{Name: benchTarget,
			Server: targetpkg.Server{DSN: fmt.Sprintf("%s@tcp(%s)/", target.User, target.Addr()), PasswordFile: pw}})
		if err != nil {
			return nil, err
		}
		took := time.Duration(run.Nanos)
		if n, err := countRows(ctx, target, into+"."+refreshTable); err != nil || n != int64(rows) {
			return nil, fmt.Errorf("restore round %d loaded %d rows, want %d: %v", round, n, rows, err)
		}
		client, err := mariadbLoad(ctx, target, sqlFile)
		if err != nil {
			return nil, err
		}
		if n, err := countRows(ctx, target, refreshSchema+"."+refreshTable); err != nil || n != int64(rows) {
			return nil, fmt.Errorf("mariadb client round %d loaded %d rows, want %d: %v", round, n, rows, err)
		}
		if err := target.Exec(ctx, "DROP DATABASE "+into, "DROP DATABASE "+refreshSchema, "DROP DATABASE IF EXISTS dbtrail"); err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "restore: round %d: restore %s (%d chunk transactions %s; %s; peak RSS %s), mariadb client %s\n", round,
			took.Round(time.Millisecond), run.Chunks, time.Duration(run.ChunkNanos).Round(time.Millisecond), phaseText(run.Phases), sizeText(rss), client.Round(time.Millisecond))
		if round == 0 || took < best {
			best, bestRun = took, run
		}
		if round == 0 || client < bestClient {
			bestClient = client
		}
		peak = max(peak, rss)
	}
	rate := float64(rows) / best.Seconds()
	clientRate := float64(rows) / bestClient.Seconds()
	size := fmt.Sprintf("%d rows", rows)
	return []result{
		judged("restore: rows/s vs the mariadb client loading the .sql export", fmt.Sprintf("%.2fx (%.0f vs %.0f rows/s)", rate/clientRate, rate, clientRate),
			fmt.Sprintf("%s, --parallel 2 (one table: two key ranges at once), best of %d; the restore's time (%s) includes the rebuild at the moment and the verification; its %d chunk transactions took %s summed over both ranges; activities: %s (LoadTable includes stage)",
				size, restoreRounds, best.Round(time.Millisecond), bestRun.Chunks, time.Duration(bestRun.ChunkNanos).Round(time.Millisecond),
				phaseText(bestRun.Phases)), measured(rate/clientRate, atLeast(1, "%.1f"))),
		judged("restore: peak RSS of the restoring worker", sizeText(peak), size+", the whole Restore workflow in a child process",
			measured(mib(peak), atMost(1024, "%.0f MiB"))),
	}, nil
}

// exportSQL writes the .sql export of the bench table at at to out: the
// Export workflow's activities (PlanExport, ExportTable, FinishExport) in
// the SDK's test environment, staged where the Export workflow stages
// (exportdir.StagingDir).
func (e *refreshEnv) exportSQL(tb *refreshFixture, at, out string) error {
	spec := payload.ExportSpec{Source: tb.source, Format: payload.ExportSQL, At: at,
		Tables: []string{refreshSchema + "." + refreshTable}, Out: out}
	staging := exportdir.StagingDir(out, "bench")
	env := newActivityEnv()
	env.RegisterActivity(e.acts)
	var plan calls.PlanExportResult
	if err := executeInto(env, &plan, e.acts.PlanExport, calls.PlanExportInput{Spec: spec, Staging: staging}); err != nil {
		return fmt.Errorf("plan export: %w", err)
	}
	var tables []calls.ExportTableResult
	for _, j := range plan.Jobs {
		var r calls.ExportTableResult
		if err := executeInto(env, &r, e.acts.ExportTable, j); err != nil {
			return fmt.Errorf("export %s.%s: %w", j.Table.Schema, j.Table.Table, err)
		}
		tables = append(tables, r)
	}
	var fin any
	return executeInto(env, &fin, e.acts.FinishExport, calls.FinishExportInput{Spec: spec, Staging: staging, Plan: plan, Tables: tables})
}

// executeInto runs activity fn with in in env and decodes its result into out.
func executeInto(env *temporaltest.TestActivityEnvironment, out, fn, in any) error {
	val, err := env.ExecuteActivity(fn, in)
	if err != nil {
		return err
	}
	if !val.HasValue() {
		return nil
	}
	return val.Get(out)
}

// mariadbLoad pipes file into the mariadb client connected to target and
// returns how long the load took.
func mariadbLoad(ctx context.Context, target *testsuite.Server, file string) (time.Duration, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, "mariadb", "--protocol=TCP", "-h127.0.0.1", "-P"+strconv.Itoa(target.Port), "-u"+target.User)
	cmd.Env = append(os.Environ(), "MYSQL_PWD="+target.Password)
	cmd.Stdin = f
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	began := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("mariadb < %s: %w: %s", file, err, errOut.String())
	}
	return time.Since(began), nil
}

// countRows is SELECT COUNT(*) of table on target.
func countRows(ctx context.Context, target *testsuite.Server, table string) (int64, error) {
	db, err := target.DB(ctx, "")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n)
	return n, err
}

// restoreChild runs the Restore workflow of in in a child process and
// returns the child's peak RSS in bytes and its times.
func (e *refreshEnv) restoreChild(ctx context.Context, in payload.RestoreInput, tg targetpkg.Target) (int64, restoreChildResult, error) {
	var res restoreChildResult
	rss, err := runChild(ctx, "restore", restoreChildEnv, restoreChildConfig{DSN: e.dsn, BackupDir: e.acts.BackupDir, WorkDir: e.acts.WorkDir, In: in, Target: tg}, &res)
	return rss, res, err
}

// runRestoreChild is the child's side: cfg is the value of restoreChildEnv.
func runRestoreChild(cfg string) error {
	if path := os.Getenv(childProfileEnv); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var c restoreChildConfig
	ctx := context.Background()
	store, err := childStore(ctx, cfg, &c)
	if err != nil {
		return err
	}
	defer store.Close()
	targets, err := targetpkg.NewSet(c.Target)
	if err != nil {
		return err
	}
	acts := &activities.Activities{Index: store, BackupDir: c.BackupDir, WorkDir: c.WorkDir, FoldMemory: refreshFoldMemory,
		Sources: map[string]activities.Source{c.In.Source: {Name: c.In.Source}}, Targets: targets}
	var s temporaltest.WorkflowTestSuite
	s.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Hour)
	// The activities run in this process beside the workflow: on a busy
	// machine a workflow task may wait for the CPU past the 1 s deadlock
	// detector, which a real worker retries and the test environment fails.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute})
	env.RegisterActivity(acts)
	env.RegisterWorkflow(workflows.Restore)
	out := restoreChildResult{Phases: map[string]time.Duration{}}
	var mu sync.Mutex
	starts := map[string]time.Time{}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		mu.Lock()
		defer mu.Unlock()
		starts[info.ActivityID] = time.Now()
	})
	env.SetOnActivityCompletedListener(func(info *activity.Info, result converter.EncodedValue, _ error) {
		mu.Lock()
		defer mu.Unlock()
		out.Phases[info.ActivityType.Name] += time.Since(starts[info.ActivityID])
		var lt calls.LoadTableResult
		if info.ActivityType.Name == "LoadTable" && result != nil && result.HasValue() && result.Get(&lt) == nil {
			out.Phases["stage"] += time.Duration(lt.StageMillis) * time.Millisecond
		}
	})
	warmWorker(&s)
	began := time.Now()
	env.ExecuteWorkflow(workflows.Restore, c.In)
	took := time.Since(began)
	if err := env.GetWorkflowError(); err != nil {
		return err
	}
	var res workflows.RestoreResult
	if err := env.GetWorkflowResult(&res); err != nil {
		return err
	}
	if len(res.Tables) != 1 || res.Rows != res.Written {
		return fmt.Errorf("restore: %d tables, %d rows, %d written; want 1 table loaded by this run", len(res.Tables), res.Rows, res.Written)
	}
	out.Nanos = int64(took)
	for _, t := range res.Tables {
		for _, ms := range t.ChunkMillis {
			out.ChunkNanos += int64(ms) * int64(time.Millisecond)
		}
		out.Chunks += t.Chunks
	}
	return writeChildResult(out)
}

// warmWorker runs one empty activity in a test environment of s: the SDK
// computes the worker's binary checksum (an MD5 of the executable, 0.3 s
// of CPU here) at its first activity. A real worker does it once when it
// starts, not in a restore; the bench does it before its clock starts.
func warmWorker(s *temporaltest.WorkflowTestSuite) {
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(func(context.Context) error { return nil }, activity.RegisterOptions{Name: "warm"})
	_, _ = env.ExecuteActivity("warm")
}
