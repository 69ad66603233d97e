// Package mydumper runs mydumper into a folder: the defaults file that keeps
// the password out of argv, the arguments (one database, or every schema but
// the system ones, consistent at one transaction, timestamps in UTC), and a
// watch that kills a mydumper making no progress (and runs one waiting on
// itself again). Reading what it wrote is
// package dumpfile's; the Dump activity adapts both to Temporal.
package mydumper

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// DefaultStall is how long mydumper may make no progress before Run kills
// it (Run.Stall 0).
const DefaultStall = 5 * time.Minute

// DefaultThreads is mydumper's thread count when Run.Threads is 0.
const DefaultThreads = 2

// ErrBadDSN is Run's error when the source DSN does not parse: retrying
// cannot help.
var ErrBadDSN = errors.New("source DSN")

// DefaultHang is how long mydumper may make no progress while the source
// runs no query before Run kills it and runs it again (Run.Hang 0).
const DefaultHang = 20 * time.Second

// Tries is how many times Do runs a mydumper that hangs (ErrHung) before
// it returns the error.
const Tries = 3

// ErrHung marks a mydumper that stopped making progress while the source
// runs no query at all: the process waits on itself (mydumper 0.10 can
// deadlock joining its worker threads at the end of a dump, its data
// written but its metadata not finished, about once in 30 runs here), so
// Do kills it and runs it again at once instead of after Stall.
var ErrHung = errors.New("mydumper hung")

// ErrStalled is Run's error when mydumper made no progress (no output line,
// no byte added to the folder) for Run.Stall and was killed.
var ErrStalled = errors.New("mydumper made no progress")

// Run is one mydumper run of a source into an existing folder.
type Run struct {
	Bin     string        // the mydumper binary; "mydumper" on PATH when empty
	DSN     string        // the source, a go-sql-driver DSN; its database, if any, is the one dumped
	Threads int           // DefaultThreads when <= 0
	Dir     string        // the output folder; exists
	Stall   time.Duration // DefaultStall when 0
	Hang    time.Duration // DefaultHang when 0
	// Tables, when not empty, are the only tables dumped (ParseTables'
	// list, as a --regex); empty: the DSN's database, or every schema but
	// the system ones.
	Tables []Table
	// Beat, when set, is called at every progress check (every
	// min(10s, Stall/2)) while mydumper runs: the caller's heartbeat.
	Beat func(msg string)
	// Log, when set, is told of a hung run that Do runs again.
	Log *slog.Logger
}

// Do runs mydumper and waits for it. The password goes to a 0600 defaults
// file beside Dir (".<dir>.cnf"), removed when Do returns. A failed run's
// error holds the end of what mydumper printed; a stalled one is killed
// (ErrStalled, naming the source's busy threads); a hung one (ErrHung) is
// killed, Dir emptied and mydumper run again, up to Tries runs; ctx's end
// kills it too.
func (r Run) Do(ctx context.Context) error {
	cfg, err := driver.ParseDSN(r.DSN)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadDSN, err)
	}
	defaults := filepath.Join(filepath.Dir(r.Dir), "."+filepath.Base(r.Dir)+".cnf")
	if err := os.WriteFile(defaults, []byte(DefaultsFile(cfg)), 0o600); err != nil {
		return fmt.Errorf("write mydumper defaults file: %w", err)
	}
	defer os.Remove(defaults)
	for try := 1; ; try++ {
		err := r.once(ctx, exec.CommandContext(ctx, cmp.Or(r.Bin, "mydumper"), Args(cfg, defaults, r.Dir, r.Threads, r.Tables)...))
		if !errors.Is(err, ErrHung) || try == Tries {
			return err
		}
		if r.Log != nil {
			r.Log.Warn("mydumper hung while the source ran none of its queries; dumping again", "dir", r.Dir, "try", try, "error", err.Error())
		}
		if err := os.RemoveAll(r.Dir); err != nil {
			return fmt.Errorf("clear dump folder %s: %w", r.Dir, err)
		}
		if err := os.Mkdir(r.Dir, filemode.Dir()); err != nil {
			return fmt.Errorf("create dump folder %s: %w", r.Dir, err)
		}
	}
}

// pipeWait bounds how long Run waits, once mydumper has ended, for its
// output pipe to close: a process it started outside its group (daemonised)
// must not hold Do, and the caller's heartbeat with it, forever.
const pipeWait = 10 * time.Second

// once starts cmd and watches it until it ends.
func (r Run) once(ctx context.Context, cmd *exec.Cmd) error {
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = childAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	cmd.WaitDelay = pipeWait
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start mydumper: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return r.watch(ctx, cmd, done, out)
}

// DefaultsFile is the [mydumper] defaults file of cfg: host, port (3306
// when the address has none), user and password.
func DefaultsFile(cfg *driver.Config) string {
	host, port, ok := strings.Cut(cfg.Addr, ":")
	if !ok {
		port = "3306"
	}
	return fmt.Sprintf("[mydumper]\nhost=%s\nport=%s\nuser=%s\npassword=%s\n", host, port, cfg.User, cfg.Passwd)
}

// Args are mydumper's arguments for a dump of cfg's database (every schema
// but the system ones when cfg names none; only tables when not empty)
// into dir, reading connection settings from defaults, with threads
// threads (DefaultThreads when <= 0).
func Args(cfg *driver.Config, defaults, dir string, threads int, tables []Table) []string {
	if threads <= 0 {
		threads = DefaultThreads
	}
	args := []string{"--defaults-file", defaults, "--outputdir", dir, "--threads", strconv.Itoa(threads),
		"--rows", "500000", "--complete-insert", "--trx-consistency-only", "--tz-utc", "--verbose", "2"}
	if len(tables) > 0 {
		return append(args, "--regex", tablesRegex(tables))
	}
	if cfg.DBName != "" {
		return append(args, "--database", cfg.DBName)
	}
	return append(args, "--regex", `^(?!(`+strings.Join(schema.SystemSchemas(), "|")+`)\.)`)
}

// watch beats while mydumper runs and kills it when it makes no progress
// (no output line, no byte added to the folder) for the stall time: a
// mydumper that hangs (waiting for a lock on the source, or stuck) fails
// with what it printed and what the source's busy threads were doing
// (e.g. its FLUSH TABLES WITH READ LOCK behind a long write) instead of
// waiting forever without saying why. Sooner, after the hang time without
// progress, it is killed with ErrHung when two looks at the source, a tick
// apart, find no query running: a dump waiting for a lock shows its FLUSH
// there, a dump reading shows its SELECT.
func (r Run) watch(ctx context.Context, cmd *exec.Cmd, done <-chan error, out *syncBuffer) error {
	stall, hang := cmp.Or(r.Stall, DefaultStall), cmp.Or(r.Hang, DefaultHang)
	tick := time.NewTicker(min(10*time.Second, stall/2, hang/2))
	defer tick.Stop()
	last, lastChange, quiet := int64(-1), time.Now(), 0
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("mydumper into %s: %w: %s", r.Dir, err, tail(out.String(), 2000))
			}
			return nil
		case <-tick.C:
			if r.Beat != nil {
				r.Beat("dumping into " + r.Dir)
			}
			if n := int64(out.Len()) + dirBytes(r.Dir); n != last {
				last, lastChange, quiet = n, time.Now(), 0
				continue
			}
			idle := time.Since(lastChange)
			if idle >= hang && idle < stall {
				threads, err := sourceThreads(ctx, r.DSN)
				if quiet = quiet + 1; err != nil || len(threads) > 0 {
					quiet = 0
				}
				if quiet >= 2 {
					killGroup(cmd.Process)
					<-done
					return fmt.Errorf("%w: no progress into %s for %s while the source ran no query: killed",
						ErrHung, r.Dir, idle.Round(time.Second))
				}
			}
			if idle >= stall {
				threads := describeThreads(sourceThreads(ctx, r.DSN))
				killGroup(cmd.Process)
				<-done
				return fmt.Errorf("mydumper into %s: %w for %s (no output, no dump bytes): killed; %s; it printed: %s",
					r.Dir, ErrStalled, stall, threads, tail(out.String(), 2000))
			}
		}
	}
}

// dirBytes is the size of the files in dir (not recursive: mydumper writes
// one folder); errors count as 0.
func dirBytes(dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// syncBuffer is a bytes.Buffer safe for a writing process and a reading
// watcher.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *syncBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}

// tail is the last n bytes of s, marked with an ellipsis when cut.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
