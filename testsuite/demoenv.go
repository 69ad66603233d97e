package testsuite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// IndexDatabase is the database on the index server that a persistent
// environment creates and that its DBTRAIL_INDEX_DSN names.
const IndexDatabase = "dbtrail"

// Env is a persistent, restartable pair of servers for the demo and for
// dbtrail-testenv: a binlog source with datadir <dir>/source and an index
// server with datadir <dir>/index, whose DSNs are in EnvFile.
type Env struct {
	Source, Index *Server
	// EnvFile is <dir>/env: shell-sourceable, mode 0600, exporting
	// DBTRAIL_SOURCE_DSN (no default database) and DBTRAIL_INDEX_DSN (on
	// IndexDatabase).
	EnvFile string
}

// StartPersistent installs the dependencies if needed (Install), then starts
// a source and an index server on 127.0.0.1 with the datadirs <dir>/source
// and <dir>/index, re-using them when they exist. Passwords are read back
// from an earlier <dir>/env so that they survive restarts, and new ones are
// made up otherwise. It creates IndexDatabase on the index if it is missing
// and (re)writes <dir>/env with mode 0600. A port of 0 picks a free one.
// Stop shuts both servers down and keeps their datadirs; on error nothing
// is left running.
func StartPersistent(ctx context.Context, dir string, sourcePort, indexPort int) (*Env, error) {
	if sourcePort != 0 && sourcePort == indexPort {
		return nil, fmt.Errorf("start environment in %s: source and index ports are both %d", dir, sourcePort)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("start environment in %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("start environment: create %s: %w", dir, err)
	}
	e := &Env{EnvFile: filepath.Join(dir, "env")}
	old := readPasswords(e.EnvFile)
	if err := Install(ctx); err != nil {
		return nil, err
	}
	e.Source, err = Start(ctx, Options{
		Role: RoleSource, DataDir: filepath.Join(dir, "source"), Keep: true,
		Port: sourcePort, Password: old["DBTRAIL_SOURCE_DSN"],
	})
	if err != nil {
		return nil, err
	}
	e.Index, err = Start(ctx, Options{
		Role: RoleIndex, DataDir: filepath.Join(dir, "index"), Keep: true,
		Port: indexPort, Password: old["DBTRAIL_INDEX_DSN"],
	})
	if err != nil {
		_ = e.Stop()
		return nil, err
	}
	if err := e.Index.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+IndexDatabase); err != nil {
		_ = e.Stop()
		return nil, fmt.Errorf("start environment in %s: %w", dir, err)
	}
	if err := e.writeEnvFile(); err != nil {
		_ = e.Stop()
		return nil, err
	}
	return e, nil
}

// SourceDSN returns the source's DSN as written to the env file.
func (e *Env) SourceDSN() string { return e.Source.DSN("") }

// IndexDSN returns the index's DSN (on IndexDatabase) as written to the env
// file.
func (e *Env) IndexDSN() string { return e.Index.DSN(IndexDatabase) }

// Stop shuts down the servers that are running, index first, keeping their
// datadirs, and returns every error met. A second call does nothing.
func (e *Env) Stop() error {
	var errs []error
	for _, s := range []*Server{e.Index, e.Source} {
		if s == nil {
			continue
		}
		if err := s.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// writeEnvFile writes the DSNs, single-quoted for the shell, to e.EnvFile
// with mode 0600, through a temporary file and a rename.
func (e *Env) writeEnvFile() error {
	path := e.EnvFile
	var b strings.Builder
	b.WriteString("# dbtrail demo environment; load with: set -a; . " + path + "; set +a\n")
	for _, kv := range [][2]string{
		{"DBTRAIL_SOURCE_DSN", e.SourceDSN()},
		{"DBTRAIL_INDEX_DSN", e.IndexDSN()},
	} {
		fmt.Fprintf(&b, "export %s=%s\n", kv[0], ShellQuote(kv[1]))
	}
	tmp := path + ".tmp"
	_ = os.Remove(tmp) // so that WriteFile creates it with mode 0600
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ShellQuote quotes s in single quotes for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ReadEnvFile returns the variables of an env file written by
// StartPersistent, unquoted.
func ReadEnvFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			continue
		}
		if len(value) >= 2 && value[0] == '\'' && value[len(value)-1] == '\'' {
			value = strings.ReplaceAll(value[1:len(value)-1], `'\''`, "'")
		}
		out[name] = value
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// readPasswords returns the password of each DSN variable in an env file
// written by an earlier run, so that restarts keep them; a missing or
// unreadable file yields none.
func readPasswords(path string) map[string]string {
	out := map[string]string{}
	vars, err := ReadEnvFile(path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			slog.Warn("testsuite: cannot read previous env file; new passwords", "path", path, "error", err)
		}
		return out
	}
	for name, value := range vars {
		if cfg, err := mysql.ParseDSN(value); err == nil && cfg.Passwd != "" && !strings.ContainsAny(cfg.Passwd, "\r\n") {
			out[name] = cfg.Passwd
		}
	}
	return out
}
