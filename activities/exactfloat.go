package activities

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	driver "github.com/go-sql-driver/mysql"
	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/dsn"
	"github.com/dbtrail/dbtrail/internal/dumpconv"
	"github.com/dbtrail/dbtrail/internal/exactfloat"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/verify"
	"github.com/dbtrail/dbtrail/payload"
)

// ExactFloats makes the FLOAT values of a dump exact (see package
// exactfloat): mydumper writes them with 6 significant digits. For every
// dumped table with FLOAT columns and a primary or unique key it reads the
// exact values in one consistent snapshot of the source taken now, at
// binlog position P; waits for capture to pass P; takes the values at the
// dump of the rows changed between the dump and P from the index (the before
// image of each key's first change); and writes the table's fix file under
// the dump folder. ConvertTable then puts the exact values in place.
//
// A table it cannot fix keeps its dumped values and is listed in AsDumped:
// no key, a FLOAT key column, a live table of another shape, a change the
// index holds in another shape; all of them when the source does not
// report the binlog position of a consistent snapshot (MySQL). A retry
// starts over.
func (a *Activities) ExactFloats(ctx context.Context, in calls.ExactFloatsInput) (calls.ExactFloatsResult, error) {
	out := calls.ExactFloatsResult{Files: make([]string, len(in.Tables))}
	tables, err := floatTables(in, &out)
	if err != nil || len(tables) == 0 {
		return out, err
	}
	set, stop := keepAlive(ctx) // also through the merge of a big table's fix file
	defer stop()
	dir := filepath.Join(in.DumpDir, exactfloat.Dir)
	if err := os.RemoveAll(dir); err != nil {
		return out, fmt.Errorf("clear %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, filemode.Dir()); err != nil {
		return out, fmt.Errorf("create %s: %w", dir, err)
	}
	db, err := a.openSource(in.Source)
	if err != nil {
		return out, err
	}
	defer db.Close()
	conn, pos, release, err := verify.ConsistentSnapshot(ctx, db)
	if err != nil {
		return out, fmt.Errorf("source %s: %w", in.Source, err)
	}
	defer release()
	if !pos.Reported || pos.File == "" {
		for _, t := range tables {
			out.AsDumped = append(out.AsDumped, t.Def.QualifiedName()+": the source does not report the binlog position of a consistent snapshot")
		}
		a.log(ctx).Warn("FLOAT values stay as dumped: the source does not report the binlog position of a consistent snapshot", "source", in.Source)
		return out, nil
	}
	at := binlogpos.Position{File: pos.File, Pos: pos.Pos}
	if c, err := binlogpos.Compare(at, in.Position.Coords()); err != nil || c < 0 {
		return out, fmt.Errorf("source %s: consistent snapshot at %s is not after the dump's %s (%v)", in.Source, at, in.Position.Coords(), err)
	}
	upto, err := a.waitSeqAt(ctx, in.Source, at)
	if err != nil {
		return out, err
	}
	for _, t := range tables {
		file, err := a.fixTable(ctx, conn, in, t, upto, dir, set)
		var uf *exactfloat.UnfixableError
		var shape *verify.ShapeError
		switch {
		case errors.As(err, &uf) || errors.As(err, &shape):
			out.AsDumped = append(out.AsDumped, err.Error())
			a.log(ctx).Warn("FLOAT values stay as dumped", "table", t.Def.QualifiedName(), "error", err)
		case err != nil:
			return out, err
		default:
			out.Files[t.Index] = file
		}
	}
	return out, nil
}

// floatTables returns the tables of in with FLOAT columns to fix, and lists
// in out.AsDumped those that cannot be.
func floatTables(in calls.ExactFloatsInput, out *calls.ExactFloatsResult) ([]exactfloat.Table, error) {
	fsys := os.DirFS(in.DumpDir)
	defs := make([]*schema.Table, len(in.Tables))
	for i, t := range in.Tables {
		def, _, err := dumpconv.Definition(fsys, t.Schema, t.Table, t.SchemaFile)
		if err != nil {
			return nil, badInput(err)
		}
		defs[i] = def
	}
	tables, asDumped, err := exactfloat.Select(defs)
	if err != nil {
		return nil, badInput(err)
	}
	out.AsDumped = append(out.AsDumped, asDumped...)
	return tables, nil
}

// fixTable writes t's fix file into dir (exactfloat.Fix) and returns its
// path relative to the dump folder, or "" when no value needs a fix. conn
// is in the consistent snapshot; upto is the seq of its position; progress
// takes heartbeat details.
func (a *Activities) fixTable(ctx context.Context, conn *sql.Conn, in calls.ExactFloatsInput, t exactfloat.Table, upto uint64, dir string, progress func(any)) (string, error) {
	if err := verify.CheckColumns(ctx, conn, t.Def); err != nil {
		return "", err
	}
	name := t.Def.QualifiedName()
	window := func(fn func(change.Event) error) error {
		return a.Index.WindowEvents(ctx, in.Source, t.Def.Schema, t.Def.Name, in.Position.Seq, upto, fn)
	}
	read := func(w *exactfloat.Writer) (int64, error) {
		return exactfloat.ReadSource(ctx, conn, t.Def, t.Plan, w, func(n int64) {
			progress(fmt.Sprintf("reading exact FLOAT values of %s: %d rows", name, n))
		})
	}
	rel := exactfloat.FixFile(t.Index)
	res, err := exactfloat.Fix(t, window, read, dir, filepath.Join(in.DumpDir, rel))
	if err != nil {
		return "", err
	}
	a.log(ctx).Info("exact FLOAT values read", "table", name, "rows", res.Rows, "changed_keys", res.ChangedKeys, "fixes", res.Fixes)
	if res.Fixes == 0 {
		return "", nil
	}
	return rel, nil
}

// openSource opens a pool on the source that reads values as the server
// prints them (parseTime off).
func (a *Activities) openSource(name string) (*sql.DB, error) {
	src, err := a.source(name)
	if err != nil {
		return nil, err
	}
	cfg, err := dsn.Parse("source DSN", src.DSN)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), payload.ErrBadConfig, nil)
	}
	cfg.ParseTime = false
	c, err := driver.NewConnector(cfg)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("source DSN: "+err.Error(), payload.ErrBadConfig, nil)
	}
	return sql.OpenDB(c), nil
}

// floatSink returns what ConvertTable appends the rows of def to: tw, or,
// when the table has a fix file, an exactfloat.Sink in front of tw. done
// closes the fix file.
func floatSink(in calls.ConvertTableInput, def *schema.Table, tw *snapshot.TableWriter) (sink dumpconv.Sink, done func(), err error) {
	if in.Floats == "" {
		return tw, func() {}, nil
	}
	s, done, err := exactfloat.OpenSink(in.DumpDir, in.Floats, def, tw)
	if errors.Is(err, exactfloat.ErrBadFixFile) {
		return nil, nil, badInput(err)
	}
	if err != nil {
		return nil, nil, err
	}
	return s, done, nil
}
