// Command dbtrail-demo is what `make demo` runs, the first thing a new user
// sees of dbtrail: it starts a MariaDB binlog source and a MariaDB index
// server on 127.0.0.1 (persistent datadirs under --dir, so a second run picks
// up where the first stopped), creates a small sample shop database on the
// source, runs `dbtrail init` and then `dbtrail dev`: an embedded Temporal
// server (history in <dir>/dev, kept between runs) with its web UI, a worker
// with the real activities, and capture. It sends a little steady traffic to
// the source and, once capture has caught up, takes one full backup
// (`dbtrail backup full`, into <dir>/backups; the worker writes its DuckDB
// views.sql) and queries it (`dbtrail query`). Then it prints what to look
// at, and a progress line every 10 seconds.
//
// Usage:
//
//	dbtrail-demo [--dir .dbtrail/demo] [--tps 5] [--duration 0]
//	             [--source-port 33061] [--index-port 33062]
//	             [--metrics-addr 127.0.0.1:9464] [--frontend-addr 127.0.0.1:7233]
//	             [--ui-addr 127.0.0.1:8233] [--dbtrail PATH]
//
// The DSNs (with their passwords) reach the dbtrail processes only through
// their environment (DBTRAIL_SOURCE_DSN, DBTRAIL_INDEX_DSN), never their
// command line; they are also in <dir>/env (mode 0600), and <dir>/index.cnf
// and <dir>/source.cnf (mode 0600) are client option files for the mariadb
// command-line client. Ctrl-C (or SIGTERM) stops the traffic (and a backup
// still running: its workflow stays in Temporal's history and goes on at
// the next run), sends SIGTERM to dbtrail dev, stops both servers, keeping
// their data, and exits 0. At the end of --duration the demo lets a backup
// that is running finish first. A failed backup is reported; it does not
// stop capture or the traffic.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/testsuite"
)

// sourceName is the name capture gives the demo's source in the index, and
// the folder of its backups.
const sourceName = "main"

// defaultFrontendAddr is dbtrail's default Temporal frontend: a by-hand
// `dbtrail backup full` needs no --temporal-addr when the demo uses it.
const defaultFrontendAddr = "127.0.0.1:7233"

// temporalStartTimeout bounds the wait for dev's Temporal frontend.
const temporalStartTimeout = 3 * time.Minute

// maxTPS bounds --tps: the demo is meant to be light.
const maxTPS = 200

// config holds the command-line flags.
type config struct {
	dir          string
	tps          int
	duration     time.Duration
	sourcePort   int
	indexPort    int
	s3Port       int // versitygw, the demo's object storage; 0: none
	metricsAddr  string
	frontendAddr string // Temporal frontend (gRPC) of dbtrail dev
	uiAddr       string // Temporal web UI of dbtrail dev
	apiAddr      string // HTTP API of dbtrail dev
	sqlAddr      string // time-travel SQL port of dbtrail dev
	dbtrail      string
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dbtrail-demo:", err)
		os.Exit(2)
	}
	// What the demo and its children (versitygw's objects, the servers'
	// files) create in its folder is private, as dbtrail's own (docs/files.md).
	filemode.Apply(filemode.Private)
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "dbtrail-demo: error:", err)
		os.Exit(1)
	}
}

// parseFlags parses and checks the command line.
func parseFlags(args []string, out io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("dbtrail-demo", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.dir, "dir", ".dbtrail/demo", "folder for the datadirs, the env file and the client option files (kept between runs)")
	fs.IntVar(&c.tps, "tps", 5, fmt.Sprintf("transactions per second sent to the source (1..%d)", maxTPS))
	fs.DurationVar(&c.duration, "duration", 0, "stop after the traffic has run this long (0: until Ctrl-C)")
	fs.IntVar(&c.sourcePort, "source-port", 33061, "TCP port of the source server on 127.0.0.1 (0: any free port)")
	fs.IntVar(&c.indexPort, "index-port", 33062, "TCP port of the index server on 127.0.0.1 (0: any free port)")
	fs.IntVar(&c.s3Port, "s3-port", 33063, "TCP port of the S3 server (versitygw) on 127.0.0.1 that holds the snapshots' remote copies (0: no object storage)")
	fs.StringVar(&c.apiAddr, "api-addr", "127.0.0.1:8280", "loopback address of dbtrail dev's HTTP API")
	fs.StringVar(&c.sqlAddr, "sql-addr", "127.0.0.1:3307", "loopback address of dbtrail dev's time-travel SQL port (MySQL protocol)")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "127.0.0.1:9464", "loopback address of capture's Prometheus /metrics endpoint")
	fs.StringVar(&c.frontendAddr, "frontend-addr", defaultFrontendAddr, "loopback address of the embedded Temporal frontend (gRPC)")
	fs.StringVar(&c.uiAddr, "ui-addr", "127.0.0.1:8233", "loopback address of the Temporal web UI")
	fs.StringVar(&c.dbtrail, "dbtrail", "", "path of the dbtrail binary (default: next to dbtrail-demo, then on PATH)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	case c.tps < 1 || c.tps > maxTPS:
		return c, fmt.Errorf("--tps %d: want 1..%d", c.tps, maxTPS)
	case c.duration < 0:
		return c, fmt.Errorf("--duration %s is negative", c.duration)
	case c.sourcePort < 0 || c.sourcePort > 65535 || c.indexPort < 0 || c.indexPort > 65535:
		return c, fmt.Errorf("--source-port %d / --index-port %d: want 0..65535", c.sourcePort, c.indexPort)
	case c.sourcePort != 0 && c.sourcePort == c.indexPort:
		return c, fmt.Errorf("--source-port and --index-port are both %d", c.sourcePort)
	case c.s3Port < 0 || c.s3Port > 65535 || c.s3Port != 0 && (c.s3Port == c.sourcePort || c.s3Port == c.indexPort):
		return c, fmt.Errorf("--s3-port %d: want 0..65535, not a MariaDB port", c.s3Port)
	}
	seen := map[string]string{}
	for _, a := range []struct{ flag, addr, example string }{
		{"metrics-addr", c.metricsAddr, "127.0.0.1:9464"},
		{"frontend-addr", c.frontendAddr, "127.0.0.1:7233"},
		{"ui-addr", c.uiAddr, "127.0.0.1:8233"},
		{"api-addr", c.apiAddr, "127.0.0.1:8280"},
		{"sql-addr", c.sqlAddr, "127.0.0.1:3307"},
	} {
		host, port, err := net.SplitHostPort(a.addr)
		n, perr := strconv.Atoi(port)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() || perr != nil || n < 1 || n > 65535 {
			return c, fmt.Errorf("--%s %q: want a loopback address with a port, such as %s", a.flag, a.addr, a.example)
		}
		if other, ok := seen[port]; ok {
			return c, fmt.Errorf("--%s and --%s both use port %s", other, a.flag, port)
		}
		seen[port] = a.flag
	}
	return c, nil
}

// say prints one line of the demo's own output.
func say(format string, args ...any) {
	fmt.Printf("dbtrail-demo: "+format+"\n", args...)
}

// run is the whole demo. It returns nil when stopped by a signal or by
// --duration, and an error when something failed.
func run(cfg config) (err error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	bin, err := findDbtrail(cfg.dbtrail)
	if err != nil {
		return err
	}

	say("installing dependencies if needed and starting MariaDB source (port %d) and index (port %d) in %s",
		cfg.sourcePort, cfg.indexPort, cfg.dir)
	start := time.Now()
	env, err := testsuite.StartPersistent(ctx, cfg.dir, cfg.sourcePort, cfg.indexPort)
	if err != nil {
		return fmt.Errorf("start servers: %w", err)
	}
	defer func() {
		say("stopping both servers (data kept in %s)", cfg.dir)
		if serr := env.Stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("stop servers: %w", serr))
		}
	}()
	say("source on %s, index on %s (ready in %s); DSNs in %s",
		env.Source.Addr(), env.Index.Addr(), time.Since(start).Round(time.Millisecond), env.EnvFile)

	src, err := env.Source.DB(ctx, "")
	if err != nil {
		return err
	}
	defer src.Close()
	created, err := ensureShop(ctx, src)
	if err != nil {
		return fmt.Errorf("sample schema on source %s: %w", env.Source.Addr(), err)
	}
	if created {
		say("created sample database shop (customers, products, orders) with seed rows")
	} else {
		say("re-using sample database shop from an earlier run")
	}
	files, err := writeClientFiles(filepath.Dir(env.EnvFile), env)
	if err != nil {
		return err
	}

	dir := filepath.Dir(env.EnvFile) // absolute
	backupDir := filepath.Join(dir, "backups")
	childEnv := childEnviron(env)
	say("running %s init", bin)
	if err := runChild(ctx, bin, childEnv, "init"); err != nil {
		return err
	}
	if err := checkAddrsFree(cfg); err != nil {
		return err
	}
	targets, err := writeTargets(dir, env.Index)
	if err != nil {
		return err
	}
	devArgs := []string{"dev", "--data-dir", filepath.Join(dir, "dev"), "--backup-dir", backupDir,
		"--source", sourceName, "--metrics-addr", cfg.metricsAddr, "--refresh-every", "1m",
		"--frontend-addr", cfg.frontendAddr, "--ui-addr", cfg.uiAddr, "--api-addr", cfg.apiAddr, "--sql-addr", cfg.sqlAddr, "--restore-targets", targets}
	if cfg.s3Port != 0 {
		s3srv, err := testsuite.StartPersistentS3(ctx, filepath.Join(dir, "s3"), cfg.s3Port, "dbtrail-demo")
		if err != nil {
			return fmt.Errorf("start the demo's object storage: %w", err)
		}
		defer func() {
			say("stopping the S3 server (objects kept in %s)", s3srv.Dir)
			err = errors.Join(err, s3srv.Stop())
		}()
		archiveURL := s3srv.URL("backups")
		say("S3 server (versitygw) on %s, bucket %s: every published snapshot is copied there (--archive-url %s)",
			s3srv.Endpoint, s3srv.Bucket, archiveURL)
		devArgs = append(devArgs, "--archive-url", archiveURL)
	}
	say("starting %s %s", bin, strings.Join(devArgs, " "))
	dev, err := startChild(bin, childEnv, devArgs...)
	if err != nil {
		return err
	}
	defer func() {
		say("stopping dbtrail dev (SIGTERM)")
		if derr := dev.stop(devStopTimeout); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
	say("waiting for the embedded Temporal server of dbtrail dev (%s); it takes a few seconds", cfg.frontendAddr)
	start = time.Now()
	if err := waitFrontend(ctx, cfg.frontendAddr, dev, temporalStartTimeout); err != nil {
		if ctx.Err() != nil {
			stop()
			say("interrupted while dbtrail dev was starting")
			return nil
		}
		return err
	}
	say("Temporal frontend answers on %s (after %s)", cfg.frontendAddr, time.Since(start).Round(100*time.Millisecond))

	idx, err := env.Index.DB(ctx, testsuite.IndexDatabase)
	if err != nil {
		return err
	}
	defer idx.Close()

	trafficCtx, stopTraffic := context.WithCancel(ctx)
	defer stopTraffic()
	if cfg.duration > 0 {
		trafficCtx, stopTraffic = context.WithTimeout(ctx, cfg.duration)
		defer stopTraffic()
	}
	shopDB, err := env.Source.DB(ctx, "shop")
	if err != nil {
		return err
	}
	defer shopDB.Close()
	tr := newTraffic(shopDB)
	trafficDone := make(chan struct{})
	go func() {
		defer close(trafficDone)
		tr.run(trafficCtx, cfg.tps)
	}()
	say("sending %d transactions/s to shop on %s", cfg.tps, env.Source.Addr())

	w := &watcher{
		idx: idx, src: src, traffic: tr, bin: bin, env: childEnv,
		files: files, envFile: env.EnvFile, backupDir: backupDir, cfg: cfg,
		sourceAddr: env.Source.Addr(), indexAddr: env.Index.Addr(),
		tokenFile: filepath.Join(dir, "dev", api.DevTokenFile),
	}
	werr := w.loop(ctx, trafficCtx, dev)
	stopTraffic()
	<-trafficDone
	if ctx.Err() != nil {
		stop() // a second Ctrl-C now kills the demo, and its children with it
		fmt.Println()
		say("interrupted; %d transactions sent (%d failed)", tr.sent.Load(), tr.failed.Load())
	} else if werr == nil {
		say("--duration %s is over; %d transactions sent (%d failed)", cfg.duration, tr.sent.Load(), tr.failed.Load())
	}
	return werr
}

// devStopTimeout bounds how long dbtrail dev may take to stop after SIGTERM
// (capture, the worker, then the Temporal server) before it is killed.
const devStopTimeout = time.Minute

// checkAddrsFree fails with advice when something already listens on one
// of the addresses dbtrail dev is to take, e.g. a dev or demo still running.
func checkAddrsFree(cfg config) error {
	for _, a := range []struct{ flag, addr string }{
		{"metrics-addr", cfg.metricsAddr}, {"frontend-addr", cfg.frontendAddr}, {"ui-addr", cfg.uiAddr}, {"api-addr", cfg.apiAddr}, {"sql-addr", cfg.sqlAddr},
	} {
		l, err := net.Listen("tcp", a.addr)
		if err != nil {
			return fmt.Errorf("--%s %s is taken (another dbtrail dev or demo running?); stop it or choose another with --%s: %w",
				a.flag, a.addr, a.flag, err)
		}
		l.Close()
	}
	return nil
}

// waitFrontend waits until addr accepts TCP connections, dev ends (an
// error), ctx ends or timeout passes.
func waitFrontend(ctx context.Context, addr string, dev *child, timeout time.Duration) error {
	deadline := time.After(timeout)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var d net.Dialer
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-dev.done:
			return fmt.Errorf("%s exited before its Temporal frontend answered on %s (%s); its log is above, prefixed [%s]",
				dev.name, addr, exitText(dev.err), dev.name)
		case <-deadline:
			return fmt.Errorf("the Temporal frontend of %s did not answer on %s within %s; its log is above, prefixed [%s]",
				dev.name, addr, timeout, dev.name)
		case <-tick.C:
			dctx, cancel := context.WithTimeout(ctx, time.Second)
			conn, err := d.DialContext(dctx, "tcp", addr)
			cancel()
			if err == nil {
				conn.Close()
				return nil
			}
		}
	}
}
