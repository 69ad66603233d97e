package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/dumpfile"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/mydumper"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/payload"
)

// Dump runs mydumper against the source into <WorkDir>/<source>/<snapshot>.
// A dump that finished before (its metadata file is complete) is reused, so
// a retried workflow does not dump twice; a partial one is redone. Before
// mydumper starts, the work folder's free space is checked against the
// dump's estimated size (dumpNeed): too little is NoRoom. The password
// reaches mydumper in a 0600 defaults file, never in argv.
//
// With in.Tables (a partial full backup) mydumper dumps those tables only,
// at its own consistent position; a list that is not schema.table names,
// or names a table the source does not have as a base table, is refused
// (BadInput) before mydumper runs, and the result lists exactly those
// tables (a table dropped meanwhile is BadInput too).
func (a *Activities) Dump(ctx context.Context, in calls.DumpInput) (calls.DumpResult, error) {
	src, err := a.source(in.Source)
	if err != nil {
		return calls.DumpResult{}, err
	}
	var tables []mydumper.Table
	if len(in.Tables) > 0 {
		if tables, err = mydumper.ParseTables(in.Tables); err != nil {
			return calls.DumpResult{}, badInput(fmt.Errorf("partial full backup of %s: %w", in.Source, err))
		}
	}
	dir := filepath.Join(a.WorkDir, in.Source, in.SnapshotID)
	if res, err := a.readDump(dir); err == nil {
		a.log(ctx).Info("reusing finished dump", "dir", dir)
		return onlyTables(res, in.Source, tables)
	}
	if err := os.RemoveAll(dir); err != nil {
		return calls.DumpResult{}, fmt.Errorf("clear dump folder %s: %w", dir, err)
	}
	est, err := a.checkDumpSpace(ctx, in.Source, dir, tables)
	if err != nil {
		return calls.DumpResult{}, err
	}
	if err := os.MkdirAll(dir, filemode.Dir()); err != nil {
		return calls.DumpResult{}, fmt.Errorf("create dump folder %s: %w", dir, err)
	}
	if err := a.runMydumper(ctx, src, dir, tables); err != nil {
		return calls.DumpResult{}, err
	}
	res, err := a.readDump(dir)
	if err != nil {
		return res, err
	}
	if res, err = onlyTables(res, in.Source, tables); err != nil {
		return res, err
	}
	written, err := folderSize(dir)
	if err != nil {
		return res, err
	}
	res.Space = spaceneed.Record(spaceneed.KindDump, est, written)
	return res, nil
}

// folderSize is the size of the files under dir.
func folderSize(dir string) (uint64, error) {
	var n uint64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += uint64(info.Size())
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", dir, err)
	}
	return n, nil
}

// runMydumper runs mydumper for src into dir (mydumper.Run; only tables
// when not empty), heartbeating
// while it runs; a DSN that does not parse is ErrBadConfig.
func (a *Activities) runMydumper(ctx context.Context, src Source, dir string, tables []mydumper.Table) error {
	run := mydumper.Run{Bin: a.Mydumper, DSN: src.DSN, Threads: src.DumpThreads, Dir: dir, Stall: a.DumpStall, Hang: a.DumpHang, Tables: tables,
		Log: a.log(ctx), Beat: func(msg string) { activity.RecordHeartbeat(ctx, msg) }}
	err := run.Do(ctx)
	if errors.Is(err, mydumper.ErrBadDSN) {
		return temporal.NewNonRetryableApplicationError(err.Error(), payload.ErrBadConfig, nil)
	}
	return err
}

// DefaultDumpStall is how long mydumper may make no progress before the
// Dump activity kills it (Activities.DumpStall 0).
const DefaultDumpStall = mydumper.DefaultStall

// DefaultDumpHang is how long a mydumper may make no progress while the
// source runs no query before Dump runs it again (Activities.DumpHang 0).
const DefaultDumpHang = mydumper.DefaultHang

// readDump reads a finished dump (dumpfile.Read) and lists its tables,
// leaving out views and system schemas. An unfinished or missing dump is a
// plain error (the caller redoes it); a damaged one is ErrBadDump.
func (a *Activities) readDump(dir string) (calls.DumpResult, error) {
	d, err := dumpfile.Read(os.DirFS(dir))
	var bad *dumpfile.BadDumpError
	if errors.As(err, &bad) {
		return calls.DumpResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("dump %s: %v", dir, err), payload.ErrBadDump, err)
	}
	if err != nil {
		return calls.DumpResult{}, fmt.Errorf("dump %s: %w", dir, err)
	}
	md := d.Metadata
	res := calls.DumpResult{Dir: dir, Position: binlogpos.Position{File: md.BinlogFile, Pos: md.BinlogPos, GTID: md.GTID}}
	for _, t := range d.Tables {
		if t.IsView || schema.IsSystemSchema(t.Schema) {
			continue
		}
		res.Tables = append(res.Tables, calls.TableRef{Schema: t.Schema, Table: t.Table, SchemaFile: t.SchemaFile, DataFiles: t.DataFiles})
	}
	for _, v := range d.Views {
		res.SkippedViews = append(res.SkippedViews, v.Name()+" (view: its rows belong to its base tables)")
	}
	return res, nil
}

// onlyTables keeps of a partial dump's tables those named in tables (a
// reused dump folder holds only those; nothing else is trusted) and
// refuses the dump when one is missing (BadInput); with no tables res is
// returned as is.
func onlyTables(res calls.DumpResult, source string, tables []mydumper.Table) (calls.DumpResult, error) {
	if len(tables) == 0 {
		return res, nil
	}
	want := map[mydumper.Table]bool{}
	for _, t := range tables {
		want[t] = false
	}
	var kept []calls.TableRef
	for _, t := range res.Tables {
		k := mydumper.Table{Schema: t.Schema, Name: t.Table}
		if _, ok := want[k]; ok {
			want[k] = true
			kept = append(kept, t)
		}
	}
	var missing []string
	for _, t := range tables {
		if !want[t] {
			missing = append(missing, t.String())
		}
	}
	if len(missing) > 0 {
		return calls.DumpResult{}, badInput(fmt.Errorf("partial full backup of %s: the dump holds no table %s (dropped meanwhile?)",
			source, strings.Join(missing, ", ")))
	}
	res.Tables, res.SkippedViews = kept, nil
	return res, nil
}
