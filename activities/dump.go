package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	driver "github.com/go-sql-driver/mysql"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/internal/dumpfile"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// Dump runs mydumper against the source into <WorkDir>/<source>/<snapshot>.
// A dump that finished before (its metadata file is complete) is reused, so
// a retried workflow does not dump twice; a partial one is redone. The
// password reaches mydumper in a 0600 defaults file, never in argv.
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
	cmd := exec.CommandContext(ctx, bin, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start mydumper: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("mydumper into %s: %w: %s", dir, err, tail(out.String(), 2000))
			}
			return nil
		case <-tick.C:
			activity.RecordHeartbeat(ctx, "dumping into "+dir)
		}
	}
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
	res := DumpResult{Dir: dir, Position: Position{File: md.BinlogFile, Pos: md.BinlogPos, GTID: md.GTID}}
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
