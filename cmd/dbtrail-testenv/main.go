// Command dbtrail-testenv runs a local demo environment: a MariaDB binlog
// source and a MariaDB index server, started by the testsuite harness.
//
// Usage:
//
//	dbtrail-testenv up [--dir .dbtrail/demo] [--source-port 33061] [--index-port 33062]
//
// up installs the dependencies if needed (scripts/install-deps.sh), starts
// both servers with persistent datadirs <dir>/source and <dir>/index
// (re-used when they exist, so the demo is restartable), creates the index
// database "dbtrail", writes <dir>/env (mode 0600, shell-sourceable:
// DBTRAIL_SOURCE_DSN and DBTRAIL_INDEX_DSN), then stays in the foreground
// until SIGINT or SIGTERM and stops both servers, keeping their datadirs.
// Passwords are kept across restarts (read back from <dir>/env) and are
// never printed. See testsuite.StartPersistent.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dbtrail/dbtrail/testsuite"
)

const usage = `usage: dbtrail-testenv up [--dir DIR] [--source-port N] [--index-port N]

up starts a MariaDB binlog source and index server with persistent datadirs
in DIR, writes DIR/env with their DSNs and runs until interrupted.
`

func main() {
	if len(os.Args) < 2 || os.Args[1] != "up" {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	fs := flag.NewFlagSet("up", flag.ExitOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage); fs.PrintDefaults() }
	dir := fs.String("dir", ".dbtrail/demo", "folder for the datadirs and the env file")
	sourcePort := fs.Int("source-port", 33061, "TCP port of the source server on 127.0.0.1")
	indexPort := fs.Int("index-port", 33062, "TCP port of the index server on 127.0.0.1")
	_ = fs.Parse(os.Args[2:]) // ExitOnError
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "dbtrail-testenv: unexpected arguments %q\n", fs.Args())
		os.Exit(2)
	}
	if err := up(*dir, *sourcePort, *indexPort); err != nil {
		slog.Error("dbtrail-testenv failed", "error", err)
		os.Exit(1)
	}
}

// up runs the environment until a signal arrives.
func up(dir string, sourcePort, indexPort int) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env, err := testsuite.StartPersistent(ctx, dir, sourcePort, indexPort)
	if err != nil {
		return err
	}
	slog.Info("source running", "addr", env.Source.Addr(), "datadir", env.Source.Dir)
	slog.Info("index running", "addr", env.Index.Addr(), "datadir", env.Index.Dir)
	fmt.Printf("dbtrail-testenv: environment written to %s\n", env.EnvFile)
	fmt.Printf("dbtrail-testenv: load it with: set -a; . %s; set +a\n", env.EnvFile)
	fmt.Println("dbtrail-testenv: press Ctrl-C to stop both servers (datadirs are kept)")

	<-ctx.Done()
	stop() // a second Ctrl-C now kills us, and the servers with us (Pdeathsig)
	slog.Info("stopping servers")
	start := time.Now()
	if err := env.Stop(); err != nil {
		return err
	}
	slog.Info("servers stopped", "elapsed", time.Since(start).Round(time.Millisecond))
	return nil
}
