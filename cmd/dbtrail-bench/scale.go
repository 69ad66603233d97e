package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/dbtrail/dbtrail/capture"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/temporal/embedded"
	"github.com/dbtrail/dbtrail/temporal/temporalclient"
	"github.com/dbtrail/dbtrail/testsuite"
)

// The scale benchmark: configurations of 1 to scaleMaxWorkers `dbtrail
// worker` processes, each configuration with its own task queue and its own
// prefix of one S3 store (so configurations take turns without stopping
// workers), every worker with its own backup and work folders (a machine of
// its own, as in temporal's TestWorkersOnTwoMachines), and worker i of a
// configuration pinned to core i (taskset -c i, where taskset and the core
// exist): one refresh's tables spread over the workers (workflows,
// refresh_spread.go), so 2 workers on 2 cores against 1 on 1 core is the
// scale-out. The source, index, S3 and Temporal are not pinned: they share
// the cores with the workers.
const (
	scaleMaxWorkers = 2
	// scaleUpdateEvery: a change batch updates one row in scaleUpdateEvery
	// (2%) of every table, and deletes and inserts one in 1,000.
	scaleUpdateEvery = 50
	scaleSource      = "main"
	// sessionCreationActivity is the SDK's activity that holds a session
	// open on its worker; its start in a history names the worker. The
	// SDK's session activities all begin with sessionActivityPrefix.
	sessionCreationActivity = "internalSessionCreationActivity"
	sessionActivityPrefix   = "internalSession"
)

// scaleEnv is what every configuration shares: the source with the tables,
// the index with capture running into it, the S3 store, the embedded
// Temporal server and the dbtrail binary.
type scaleEnv struct {
	src, idx *testsuite.Server
	s3       *testsuite.S3Server
	store    *index.Store
	srv      *embedded.Server
	c        client.Client
	bin      string
	dir      string
	tables   int
	rows     int
	rounds   int // change + refresh rounds; the best of each configuration counts
	batches  int // change batches written so far
}

// scaleConfig is one configuration: its workers poll queue and publish
// under prefix of the S3 store.
type scaleConfig struct {
	workers []*scaleWorker
	queue   string
	fullDur time.Duration // its full backup
	// published is the snapshot the configuration published last.
	published string
	runs      []scaleRun
}

// scaleWorker is one `dbtrail worker` process.
type scaleWorker struct {
	name string
	cmd  *exec.Cmd
	log  string // its stdout and stderr
	done chan struct{}
	core int // the core it is pinned to, -1 none
}

// scaleRun is one measured Refresh: its wall time, the CPU time each
// process used during it, the machine's CPU and iowait over it, and where
// it ran.
type scaleRun struct {
	elapsed      time.Duration
	workerCPU    []time.Duration // per worker of the configuration
	workerWrites int64           // bytes the workers wrote to disk
	indexCPU     time.Duration
	sourceCPU    time.Duration
	s3CPU        time.Duration
	benchCPU     time.Duration  // this process: Temporal server, capture, client
	machine      cpuSample      // every process of the machine
	host         string         // worker that held the session
	active       []string       // workers that ran activities
	tables       map[string]int // RefreshTable attempts per worker
	steps        []scaleStep    // the run's activity types, in order
	downloaded   string
	// stale: the refresh started from an older snapshot than the one the
	// configuration published last (its worker's folder was behind).
	stale     bool
	rewritten int // tables rewritten rather than paired
}

// benchScale measures a Refresh of tables changed tables of rows rows each
// with 1, 2 and 3 worker processes on the same task queue. Each
// configuration takes a full backup of the same data, then rounds
// times the tables change (one batch of updates, inserts and deletes,
// captured into the index) and every configuration refreshes it in turn,
// the order rotating per round; the best time of each counts.
func benchScale(ctx context.Context, tables, rows, rounds int) ([]result, error) {
	if tables < 1 || rows < 1000 || rounds < 1 {
		return nil, fmt.Errorf("scale: --scale-tables %d, --scale-rows %d, --scale-rounds %d: at least 1 table of 1,000 rows and 1 round", tables, rows, rounds)
	}
	e, err := startScaleEnv(ctx, tables, rows)
	if err != nil {
		return nil, err
	}
	defer e.close()
	e.rounds = rounds
	defer e.startCapture(ctx)()
	var cfgs []*scaleConfig
	defer func() {
		for _, cfg := range cfgs {
			cfg.stop()
		}
	}()
	for k := 1; k <= scaleMaxWorkers; k++ {
		cfg, err := e.startConfig(ctx, k)
		if cfg != nil {
			cfgs = append(cfgs, cfg)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := e.waitCaughtUp(ctx); err != nil {
		return nil, err
	}
	for _, cfg := range cfgs {
		if err := e.fullBackup(ctx, cfg); err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "scale: full backup with %d %s: %s\n", len(cfg.workers), plural(len(cfg.workers), "worker"), cfg.fullDur.Round(time.Millisecond))
	}
	// Round 0 warms every configuration up (the first refresh after a full
	// backup builds the table files' key maps) and is not counted; in the
	// measured rounds each configuration takes each place in the order once
	// (with 3 rounds), warm.
	for round := -1; round < e.rounds; round++ {
		if err := e.change(ctx); err != nil {
			return nil, err
		}
		if err := e.waitCaughtUp(ctx); err != nil {
			return nil, err
		}
		for i := range cfgs {
			cfg := cfgs[(i+max(round, 0))%len(cfgs)]
			r, err := e.refresh(ctx, cfg, round+1)
			if err != nil {
				return nil, err
			}
			label := fmt.Sprintf("round %d", round+1)
			if round < 0 {
				label = "warm-up"
			} else {
				cfg.runs = append(cfg.runs, r)
			}
			fmt.Fprintf(os.Stderr, "scale: %s, %d %s: %s on %s\n", label, len(cfg.workers),
				plural(len(cfg.workers), "worker"), r.elapsed.Round(time.Millisecond), r.host)
		}
	}
	return e.results(cfgs), nil
}

// startScaleEnv starts the source (with the tables loaded), the index, the
// S3 store and the Temporal server, and builds the dbtrail binary. On error
// nothing is left running.
func startScaleEnv(ctx context.Context, tables, rows int) (e *scaleEnv, err error) {
	if err := testsuite.Install(ctx); err != nil {
		return nil, err
	}
	e = &scaleEnv{tables: tables, rows: rows}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	if e.dir, err = os.MkdirTemp("", "dbtrail-bench-scale-"); err != nil {
		return nil, err
	}
	if e.bin, err = buildDbtrail(ctx, e.dir); err != nil {
		return nil, err
	}
	if e.src, err = testsuite.Start(ctx, testsuite.Options{Role: testsuite.RoleSource}); err != nil {
		return nil, err
	}
	if e.idx, err = testsuite.Start(ctx, testsuite.Options{Role: testsuite.RoleIndex}); err != nil {
		return nil, err
	}
	if e.s3, err = testsuite.StartS3Server(ctx, testsuite.S3Options{Dir: e.dir}); err != nil {
		return nil, err
	}
	began := time.Now()
	if err := e.load(ctx); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "scale: %d tables of %d rows loaded in %s\n", tables, rows, time.Since(began).Round(time.Millisecond))
	if err := e.idx.Exec(ctx, "CREATE DATABASE dbtrail"); err != nil {
		return nil, err
	}
	if e.store, err = index.Open(ctx, e.indexDSN()); err != nil {
		return nil, err
	}
	if err := e.store.Init(ctx); err != nil {
		return nil, fmt.Errorf("init index: %w", err)
	}
	if e.srv, err = embedded.StartServer(ctx, embedded.ServerConfig{DataDir: filepath.Join(e.dir, "temporal"), FrontendAddr: "127.0.0.1:0"}); err != nil {
		return nil, err
	}
	if e.c, err = temporalclient.Dial(ctx, e.srv.FrontendAddr(), e.srv.Namespace(), nil); err != nil {
		return nil, err
	}
	return e, nil
}

// close stops whatever e started and removes its folder.
func (e *scaleEnv) close() {
	if e.c != nil {
		e.c.Close()
	}
	if e.srv != nil {
		e.srv.Stop()
	}
	if e.store != nil {
		e.store.Close()
	}
	for _, stop := range []func() error{e.s3Stop, e.idxStop, e.srcStop} {
		if err := stop(); err != nil {
			slog.Warn("scale benchmark: stop", slog.String("error", err.Error()))
		}
	}
	if e.dir != "" {
		os.RemoveAll(e.dir)
	}
}

func (e *scaleEnv) s3Stop() error {
	if e.s3 == nil {
		return nil
	}
	return e.s3.Stop()
}

func (e *scaleEnv) idxStop() error {
	if e.idx == nil {
		return nil
	}
	return e.idx.Stop()
}

func (e *scaleEnv) srcStop() error {
	if e.src == nil {
		return nil
	}
	return e.src.Stop()
}

func (e *scaleEnv) indexDSN() string { return e.idx.DSN("dbtrail") }

// buildDbtrail builds cmd/dbtrail of this repository into dir.
func buildDbtrail(ctx context.Context, dir string) (string, error) {
	root, err := testsuite.RepoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "dbtrail")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/dbtrail")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build dbtrail: %w\n%s", err, out)
	}
	return bin, nil
}

// scaleTable is the name of table i (from 1) in schema app.
func scaleTable(i int) string { return fmt.Sprintf("t%02d", i) }

// load creates schema app with the tables, rows rows each, outside the
// binlog (capture starts after it).
func (e *scaleEnv) load(ctx context.Context) error {
	if err := e.src.Exec(ctx, "CREATE DATABASE app"); err != nil {
		return err
	}
	db, err := e.src.DB(ctx, "app")
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET SESSION sql_log_bin = 0"); err != nil {
		return fmt.Errorf("load tables: %w", err)
	}
	for i := 1; i <= e.tables; i++ {
		t := scaleTable(i)
		for _, q := range []string{
			"CREATE TABLE " + t + " (id INT PRIMARY KEY, pad VARCHAR(60), n BIGINT, d DECIMAL(12,3))",
			fmt.Sprintf("INSERT INTO %s SELECT seq, CONCAT('row-', seq, REPEAT('x', seq %% 40)), seq * 7, seq / 3 FROM seq_1_to_%d", t, e.rows),
		} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("load %s: %w", t, err)
			}
		}
	}
	return nil
}

// startCapture runs capture of the source into the index (from the
// binlog's end: the loaded rows are not events) until the returned
// function is called.
func (e *scaleEnv) startCapture(ctx context.Context) (stop func()) {
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- capture.Run(cctx, capture.Config{Source: scaleSource, SourceDSN: e.src.DSN(""), Logger: slog.Default()}, e.store)
	}()
	return func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			slog.Warn("scale benchmark: capture", slog.String("error", err.Error()))
		}
	}
}

// waitCaughtUp waits until capture's checkpoint is at the source's binlog
// end.
func (e *scaleEnv) waitCaughtUp(ctx context.Context) error {
	want, err := masterPos(ctx, e.src)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		cp, ok, err := e.store.LoadCheckpoint(ctx, scaleSource)
		if err != nil {
			return err
		}
		if ok {
			c, err := binlogpos.Compare(cp.Pos().Coords(), want)
			if err == nil && c >= 0 {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("capture did not reach %s in 5 minutes", want)
}

// startConfig starts configuration k: k workers on task queue scale-<k>,
// publishing under prefix scale-<k> of the S3 store, and waits until each
// polls. The configuration is returned with whatever workers started, also
// on error.
func (e *scaleEnv) startConfig(ctx context.Context, k int) (*scaleConfig, error) {
	cfg := &scaleConfig{queue: fmt.Sprintf("scale-%d", k)}
	url := e.s3.URL(cfg.queue)
	for i := range k {
		name := fmt.Sprintf("k%d/w%d", k, i+1)
		w, err := e.startWorker(ctx, name, cfg.queue, url, i)
		if err != nil {
			return cfg, err
		}
		cfg.workers = append(cfg.workers, w)
	}
	return cfg, e.waitPollers(ctx, cfg)
}

// startWorker starts `dbtrail worker` on queue with folders of its own
// under e.dir/name, pinned to core (when taskset and the core exist; -1
// none).
func (e *scaleEnv) startWorker(ctx context.Context, name, queue, url string, core int) (*scaleWorker, error) {
	dir := filepath.Join(e.dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	w := &scaleWorker{name: name, log: filepath.Join(dir, "worker.log"), done: make(chan struct{}), core: -1}
	out, err := os.Create(w.log)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	args := []string{e.bin, "worker", "--temporal-addr", e.srv.FrontendAddr(), "--task-queue", queue,
		"--source", scaleSource, "--refresh-every", "0", "--archive-url", url,
		"--backup-dir", filepath.Join(dir, "backups"), "--work-dir", filepath.Join(dir, "work")}
	if taskset, err := exec.LookPath("taskset"); err == nil && core >= 0 && core < runtime.NumCPU() {
		args = append([]string{taskset, "-c", strconv.Itoa(core)}, args...)
		w.core = core
	}
	w.cmd = exec.Command(args[0], args[1:]...)
	w.cmd.Env = append(os.Environ(), "DBTRAIL_SOURCE_DSN="+e.src.DSN(""), "DBTRAIL_INDEX_DSN="+e.indexDSN())
	w.cmd.Stdout, w.cmd.Stderr = out, out
	w.cmd.SysProcAttr = childProcAttr()
	if err := w.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start worker %s: %w", name, err)
	}
	go func() {
		w.cmd.Wait()
		close(w.done)
	}()
	return w, nil
}

// waitPollers waits until every worker of cfg polls its queue for workflow
// tasks, or fails when one exited.
func (e *scaleEnv) waitPollers(ctx context.Context, cfg *scaleConfig) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		for _, w := range cfg.workers {
			if w.exited() {
				return fmt.Errorf("worker %s exited: %s", w.name, w.logTail())
			}
		}
		d, err := e.c.DescribeTaskQueue(ctx, cfg.queue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if err != nil {
			return fmt.Errorf("describe task queue %s: %w", cfg.queue, err)
		}
		if len(d.GetPollers()) >= len(cfg.workers) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the %d workers of task queue %s did not all poll within 2 minutes", len(cfg.workers), cfg.queue)
}

func (w *scaleWorker) exited() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// logTail is the end of the worker's log, for error messages.
func (w *scaleWorker) logTail() string {
	b, _ := os.ReadFile(w.log)
	return tail(string(b), 2000)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// stop ends every worker of cfg (SIGTERM, SIGKILL after 30 s).
func (cfg *scaleConfig) stop() {
	for _, w := range cfg.workers {
		if w.exited() {
			continue
		}
		w.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-w.done:
		case <-time.After(30 * time.Second):
			w.cmd.Process.Kill()
			<-w.done
		}
	}
}

// workerOf is the worker of cfg whose process id a default worker identity
// ("<pid>@<host>@...") starts with; "?" plus the identity when none.
func (cfg *scaleConfig) workerOf(identity string) string {
	pid, err := strconv.Atoi(strings.SplitN(identity, "@", 2)[0])
	if err == nil {
		for _, w := range cfg.workers {
			if w.cmd.Process.Pid == pid {
				return w.name
			}
		}
	}
	return "? " + identity
}
