// Command dbtrail-demo is what `make demo` runs, the first thing a new user
// sees of dbtrail: it starts a MariaDB binlog source and a MariaDB index
// server on 127.0.0.1 (persistent datadirs under --dir, so a second run picks
// up where the first stopped), creates a small sample shop database on the
// source, runs `dbtrail init` and `dbtrail capture`, sends a little steady
// traffic to the source and prints what to look at once capture has caught
// up, then a progress line every 10 seconds.
//
// Usage:
//
//	dbtrail-demo [--dir .dbtrail/demo] [--tps 5] [--duration 0]
//	             [--source-port 33061] [--index-port 33062]
//	             [--metrics-addr 127.0.0.1:9464] [--dbtrail PATH]
//
// The DSNs (with their passwords) reach the dbtrail processes only through
// their environment (DBTRAIL_SOURCE_DSN, DBTRAIL_INDEX_DSN), never their
// command line; they are also in <dir>/env (mode 0600), and <dir>/index.cnf
// and <dir>/source.cnf (mode 0600) are client option files for the mariadb
// command-line client. Ctrl-C (or SIGTERM, or the end of --duration) stops
// the traffic, sends SIGTERM to capture, stops both servers, keeping their
// data, and exits 0.
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
	"syscall"
	"time"

	"github.com/dbtrail/dbtrail/testsuite"
)

// sourceName is the name capture gives the demo's source in the index.
const sourceName = "main"

// maxTPS bounds --tps: the demo is meant to be light.
const maxTPS = 200

// config holds the command-line flags.
type config struct {
	dir         string
	tps         int
	duration    time.Duration
	sourcePort  int
	indexPort   int
	metricsAddr string
	dbtrail     string
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
	fs.StringVar(&c.metricsAddr, "metrics-addr", "127.0.0.1:9464", "loopback address of capture's Prometheus /metrics endpoint")
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
	}
	host, _, err := net.SplitHostPort(c.metricsAddr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return c, fmt.Errorf("--metrics-addr %q: want a loopback address such as 127.0.0.1:9464", c.metricsAddr)
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

	childEnv := childEnviron(env)
	say("running %s init", bin)
	if err := runChild(ctx, bin, childEnv, "init"); err != nil {
		return err
	}
	say("starting %s capture --source %s --metrics-addr %s", bin, sourceName, cfg.metricsAddr)
	capture, err := startChild(bin, childEnv, "capture", "--source", sourceName, "--metrics-addr", cfg.metricsAddr)
	if err != nil {
		return err
	}
	defer func() {
		say("stopping capture (SIGTERM)")
		if cerr := capture.stop(30 * time.Second); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()

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
		files: files, envFile: env.EnvFile, cfg: cfg, sourceAddr: env.Source.Addr(), indexAddr: env.Index.Addr(),
	}
	werr := w.loop(trafficCtx, capture)
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
