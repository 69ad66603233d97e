package activities

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	driver "github.com/go-sql-driver/mysql"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/dumpfile"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// Dump runs mydumper against the source into <WorkDir>/<source>/<snapshot>.
// A dump that finished before (its metadata file is complete) is reused, so
// a retried workflow does not dump twice; a partial one is redone. Before
// mydumper starts, the work folder's free space is checked against the
// dump's estimated size (dumpNeed): too little is NoRoom. The password
// reaches mydumper in a 0600 defaults file, never in argv.
func (a *Activities) Dump(ctx context.Context, in DumpInput) (DumpResult, error) {
	src, err := a.source(in.Source)
	if err != nil {
		return DumpResult{}, err
	}
	dir := filepath.Join(a.WorkDir, in.Source, in.SnapshotID)
	if res, err := a.readDump(dir); err == nil {
		a.log(ctx).Info("reusing finished dump", "dir", dir)
		return res, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return DumpResult{}, fmt.Errorf("clear dump folder %s: %w", dir, err)
	}
	if err := a.checkDumpRoom(ctx, in.Source, dir); err != nil {
		return DumpResult{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return DumpResult{}, fmt.Errorf("create dump folder %s: %w", dir, err)
	}
	if err := a.runMydumper(ctx, src, dir); err != nil {
		return DumpResult{}, err
	}
	return a.readDump(dir)
}

func (a *Activities) runMydumper(ctx context.Context, src Source, dir string) error {
	cfg, err := driver.ParseDSN(src.DSN)
	if err != nil {
		return temporal.NewNonRetryableApplicationError("source DSN: "+err.Error(), ErrBadConfig, nil)
	}
	host, port, ok := strings.Cut(cfg.Addr, ":")
	if !ok {
		port = "3306"
	}
	defaults := filepath.Join(filepath.Dir(dir), "."+filepath.Base(dir)+".cnf")
	body := fmt.Sprintf("[mydumper]\nhost=%s\nport=%s\nuser=%s\npassword=%s\n", host, port, cfg.User, cfg.Passwd)
	if err := os.WriteFile(defaults, []byte(body), 0o600); err != nil {
		return fmt.Errorf("write mydumper defaults file: %w", err)
	}
	defer os.Remove(defaults)
	threads := src.DumpThreads
	if threads <= 0 {
		threads = 2
	}
	bin := a.Mydumper
	if bin == "" {
		bin = "mydumper"
	}
	args := []string{"--defaults-file", defaults, "--outputdir", dir, "--threads", strconv.Itoa(threads),
		"--rows", "500000", "--complete-insert", "--trx-consistency-only", "--tz-utc", "--verbose", "2"}
	if cfg.DBName != "" {
		args = append(args, "--database", cfg.DBName)
	} else {
		args = append(args, "--regex", `^(?!(`+strings.Join(schema.SystemSchemas(), "|")+`)\.)`)
	}
	for try := 1; ; try++ {
		err := a.runMydumperOnce(ctx, exec.CommandContext(ctx, bin, args...), dir, src.DSN)
		if !errors.Is(err, errMydumperHung) || try == mydumperTries {
			return err
		}
		a.log(ctx).Warn("mydumper hung after its last write while the source ran none of its queries; dumping again",
			"dir", dir, "try", try, "error", err.Error())
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("clear dump folder %s: %w", dir, err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create dump folder %s: %w", dir, err)
		}
	}
}

// mydumperTries is how many times one Dump attempt runs a mydumper that
// hangs (errMydumperHung) before it fails the attempt.
const mydumperTries = 3

// errMydumperHung marks a mydumper that stopped making progress while the
// source runs no query at all: the process waits on itself (mydumper 0.10
// can deadlock joining its worker threads at the end of a dump, its data
// written but its metadata not finished, about once in 30 runs here), so
// it is killed and run again at once instead of after DumpStall.
var errMydumperHung = errors.New("mydumper hung")

// runMydumperOnce starts cmd and watches it until it ends.
func (a *Activities) runMydumperOnce(ctx context.Context, cmd *exec.Cmd, dir, dsn string) error {
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start mydumper: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return a.watchMydumper(ctx, cmd, done, out, dir, dsn)
}

// watchMydumper heartbeats while mydumper runs and kills it when it makes
// no progress (no output line, no byte added to the dump folder) for
// a.dumpStall(): a mydumper that hangs (waiting for a lock on the source,
// or stuck) fails the attempt with what it printed, and Temporal retries,
// instead of a backup that waits forever without saying why. The error
// also says what the source's busy threads were doing (sourceThreads).
// Sooner, after a.dumpHang() without progress, a mydumper is killed with
// errMydumperHung when two looks at the source, a tick apart, find no
// query running: a dump waiting for a lock shows its FLUSH TABLES WITH READ
// LOCK there, a dump reading shows its SELECT.
func (a *Activities) watchMydumper(ctx context.Context, cmd *exec.Cmd, done <-chan error, out *syncBuffer, dir, dsn string) error {
	stall, hang := a.dumpStall(), a.dumpHang()
	tick := time.NewTicker(min(10*time.Second, stall/2, hang/2))
	defer tick.Stop()
	last, lastChange, quiet := int64(-1), time.Now(), 0
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("mydumper into %s: %w: %s", dir, err, tail(out.String(), 2000))
			}
			return nil
		case <-tick.C:
			activity.RecordHeartbeat(ctx, "dumping into "+dir)
			if n := int64(out.Len()) + dirBytes(dir); n != last {
				last, lastChange, quiet = n, time.Now(), 0
				continue
			}
			idle := time.Since(lastChange)
			if idle >= hang && idle < stall {
				threads, err := sourceThreads(ctx, dsn)
				if quiet = quiet + 1; err != nil || len(threads) > 0 {
					quiet = 0
				}
				if quiet >= 2 {
					cmd.Process.Kill()
					<-done
					return fmt.Errorf("%w: no progress into %s for %s while the source ran no query: killed",
						errMydumperHung, dir, idle.Round(time.Second))
				}
			}
			if idle >= stall {
				threads := describeThreads(sourceThreads(ctx, dsn))
				cmd.Process.Kill()
				<-done
				return fmt.Errorf("mydumper into %s made no progress for %s (no output, no dump bytes): killed; %s; it printed: %s",
					dir, stall, threads, tail(out.String(), 2000))
			}
		}
	}
}

// DefaultDumpStall is how long mydumper may make no progress before the
// Dump activity kills it (Activities.DumpStall 0).
const DefaultDumpStall = 5 * time.Minute

func (a *Activities) dumpStall() time.Duration { return cmp.Or(a.DumpStall, DefaultDumpStall) }

// DefaultDumpHang is how long a mydumper that has taken its snapshot may
// make no progress, while the source runs no query, before Dump kills it
// and runs it again (Activities.DumpHang 0).
const DefaultDumpHang = 20 * time.Second

func (a *Activities) dumpHang() time.Duration { return cmp.Or(a.DumpHang, DefaultDumpHang) }

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

// readDump reads a finished dump's metadata and lists its tables.
func (a *Activities) readDump(dir string) (DumpResult, error) {
	f, err := os.Open(filepath.Join(dir, "metadata"))
	if err != nil {
		return DumpResult{}, err
	}
	defer f.Close()
	md, err := dumpfile.ParseMetadata(f)
	if err != nil {
		return DumpResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("dump %s: %v", dir, err), ErrBadDump, err)
	}
	if md.Finished.IsZero() {
		return DumpResult{}, errors.New("dump did not finish")
	}
	tables, views, err := dumpfile.ListTables(os.DirFS(dir))
	if err != nil {
		return DumpResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("dump %s: %v", dir, err), ErrBadDump, err)
	}
	res := DumpResult{Dir: dir, Position: binlogpos.Position{File: md.BinlogFile, Pos: md.BinlogPos, GTID: md.GTID}}
	for _, t := range tables {
		if t.IsView || schema.IsSystemSchema(t.Schema) {
			continue
		}
		res.Tables = append(res.Tables, TableRef{Schema: t.Schema, Table: t.Table, SchemaFile: t.SchemaFile, DataFiles: t.DataFiles})
	}
	for _, v := range views {
		res.SkippedViews = append(res.SkippedViews, v.Name()+" (view: its rows belong to its base tables)")
	}
	return res, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
