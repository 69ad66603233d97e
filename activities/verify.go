package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/sqlexport"
	"github.com/dbtrail/dbtrail/internal/verify"
)

// Verdict values beside verify's: the table could not be verified.
const VerdictError = "error"

// VerifySnapshot compares each table of the snapshot with the live table by
// fingerprint (internal/verify), one table after the other, heartbeating.
// A table that cannot be verified is an "error" verdict, not a failure of
// the activity; a snapshot this worker does not hold, an unknown table or
// an unreachable source is.
func (a *Activities) VerifySnapshot(ctx context.Context, in calls.VerifySnapshotInput) (calls.VerifySnapshotResult, error) {
	set, stop := keepAlive(ctx)
	defer stop()
	snap, err := a.openVerified(in.Source, in.Snapshot)
	if err != nil {
		return calls.VerifySnapshotResult{}, err
	}
	tables, err := sqlexport.SelectTables(snap.Manifest, in.Tables)
	if err != nil {
		return calls.VerifySnapshotResult{}, badInput(err)
	}
	db, err := a.openSource(in.Source)
	if err != nil {
		return calls.VerifySnapshotResult{}, err
	}
	defer db.Close()
	if err := db.PingContext(ctx); err != nil {
		return calls.VerifySnapshotResult{}, fmt.Errorf("connect to source %s: %w", in.Source, err)
	}
	res := calls.VerifySnapshotResult{SnapshotID: snap.Manifest.SnapshotID, Tables: []calls.TableVerdict{}}
	for _, mt := range tables {
		set(mt.Schema + "." + mt.Table)
		r, err := verify.Table(ctx, db, snap, mt.Schema, mt.Table, verify.Options{TempDir: a.WorkDir})
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		tv := calls.TableVerdict{Table: mt.Schema + "." + mt.Table, Verdict: string(r.Verdict), Reason: r.Reason}
		switch {
		case err != nil:
			tv.Verdict, tv.Error = VerdictError, err.Error()
			res.Errors++
		case r.Verdict == verify.Match:
			res.Match++
		case r.Verdict == verify.Mismatch:
			res.Mismatch++
		default:
			res.Inconclusive++
		}
		res.Tables = append(res.Tables, tv)
	}
	a.log(ctx).Info("verify done", "source", in.Source, "snapshot", res.SnapshotID, "match", res.Match,
		"mismatch", res.Mismatch, "inconclusive", res.Inconclusive, "errors", res.Errors)
	return res, nil
}

// openVerified opens snapshot id ("" or "current": the current one) of
// source on this worker.
func (a *Activities) openVerified(source, id string) (*snapshot.Snapshot, error) {
	if _, err := a.source(source); err != nil {
		return nil, err
	}
	dir := a.sourceDir(source)
	if id == "" || id == "current" {
		if _, err := os.Lstat(filepath.Join(dir, snapshot.CurrentLink)); errors.Is(err, fs.ErrNotExist) {
			return nil, badInput(fmt.Errorf("source %s has no current snapshot on this worker: run a backup first", source))
		}
		return snapshot.OpenCurrent(dir)
	}
	if _, err := snapshot.ParseSnapshotID(id); err != nil {
		return nil, badInput(fmt.Errorf("snapshot %q: %w", id, err))
	}
	return snapshot.OpenSnapshot(snapshotDir(dir, id))
}
