// Command dbtrail-testenv runs a local demo environment: a MariaDB binlog
// source and a MariaDB index server, started by the testsuite harness.
//
// Usage:
//
//	dbtrail-testenv up [--dir .dbtrail/demo] [--source-port 33061] [--index-port 33062]
//
// up installs the dependencies if needed (scripts/install-deps.sh), starts
// both servers with persistent datadirs <dir>/source and <dir>/index
// (re-used when they exist, so the demo is restartable), writes <dir>/env
// (mode 0600, shell-sourceable: DBTRAIL_SOURCE_DSN and DBTRAIL_INDEX_DSN),
// then stays in the foreground until SIGINT or SIGTERM and stops both
// servers, keeping their datadirs. Passwords are kept across restarts (read
// back from <dir>/env) and are never printed.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/dbtrail/dbtrail/testsuite"
	"github.com/go-sql-driver/mysql"
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
		slog.Error("dbtrail-testenv failed", "err", err)
		os.Exit(1)
	}
}

// up runs the environment until a signal arrives.
func up(dir string, sourcePort, indexPort int) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if sourcePort == indexPort {
		return fmt.Errorf("source and index ports are both %d", sourcePort)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	envPath := filepath.Join(dir, "env")
	old := readPasswords(envPath)

	if err := testsuite.Install(ctx); err != nil {
		return err
	}
	src, err := testsuite.Start(ctx, testsuite.Options{
		Role: testsuite.RoleSource, DataDir: filepath.Join(dir, "source"), Keep: true,
		Port: sourcePort, Password: old["DBTRAIL_SOURCE_DSN"],
	})
	if err != nil {
		return err
	}
	defer stopServer(src)
	idx, err := testsuite.Start(ctx, testsuite.Options{
		Role: testsuite.RoleIndex, DataDir: filepath.Join(dir, "index"), Keep: true,
		Port: indexPort, Password: old["DBTRAIL_INDEX_DSN"],
	})
	if err != nil {
		return err
	}
	defer stopServer(idx)

	if err := writeEnv(envPath, src, idx); err != nil {
		return err
	}
	slog.Info("source running", "addr", src.Addr(), "datadir", src.Dir)
	slog.Info("index running", "addr", idx.Addr(), "datadir", idx.Dir)
	fmt.Printf("dbtrail-testenv: environment written to %s\n", envPath)
	fmt.Printf("dbtrail-testenv: load it with: . %s\n", envPath)
	fmt.Println("dbtrail-testenv: press Ctrl-C to stop both servers (datadirs are kept)")

	<-ctx.Done()
	stop() // a second Ctrl-C now kills us, and the servers with us (Pdeathsig)
	slog.Info("stopping servers")
	return nil
}

func stopServer(s *testsuite.Server) {
	start := time.Now()
	if err := s.Stop(); err != nil {
		slog.Error("stop failed", "role", s.Role, "addr", s.Addr(), "err", err)
		return
	}
	slog.Info("stopped", "role", s.Role, "addr", s.Addr(), "elapsed", time.Since(start).Round(time.Millisecond))
}

// writeEnv writes the DSNs, single-quoted for the shell, with mode 0600.
func writeEnv(path string, src, idx *testsuite.Server) error {
	var b strings.Builder
	b.WriteString("# Written by dbtrail-testenv; load with: . " + path + "\n")
	for _, kv := range [][2]string{
		{"DBTRAIL_SOURCE_DSN", src.DSN("")},
		{"DBTRAIL_INDEX_DSN", idx.DSN("")},
	} {
		fmt.Fprintf(&b, "export %s=%s\n", kv[0], shellQuote(kv[1]))
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil { // in case tmp already existed
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// readPasswords returns the password of each DSN variable in an env file
// written by an earlier run, so that restarts keep them; a missing or
// unreadable file yields none.
func readPasswords(path string) map[string]string {
	out := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			slog.Warn("cannot read previous env file; new passwords", "path", path, "err", err)
		}
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimPrefix(strings.TrimSpace(sc.Text()), "export ")
		name, value, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		value = strings.ReplaceAll(strings.Trim(value, "'"), `'\''`, "'")
		if cfg, err := mysql.ParseDSN(value); err == nil && cfg.Passwd != "" && !strings.ContainsAny(cfg.Passwd, "\r\n") {
			out[name] = cfg.Passwd
		}
	}
	return out
}
