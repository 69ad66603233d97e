package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/payload"
)

// checkSpace refuses, non-retryable (NoRoom), a step whose estimate (package
// room: measured bytes × spaceneed.Margin) is more than the free space of the
// file system holding path: it fails at once, naming what it needs and
// what is free, instead of at the end of the write. An estimate that is
// not Sure is not refused on: the step writes, and a full folder fails it
// cleanly (noSpace). Space freed makes the next run go.
func (a *Activities) checkSpace(path string, est spaceneed.Estimate, what string) error {
	if !est.Sure {
		return nil
	}
	return spaceErr(disk.Check(a.Disk, path, est.Bytes, what))
}

// noSpace marks err non-retryable NoRoom when it is the file system's "no
// space left on device" (ENOSPC), naming the folder and what was being
// written: the write failed cleanly (its temporary file is gone, the
// workflow removes the staging folder) and a retry would fail the same
// way until room is made. Any other err is returned as is.
func noSpace(err error, dir, what string) error {
	if err == nil || !errors.Is(err, syscall.ENOSPC) {
		return err
	}
	return nonRetryable(payload.ErrNoSpace, fmt.Errorf("%s: no space left in %s: %w", what, dir, err))
}

// spaceErr marks a *disk.NoSpaceError non-retryable NoRoom; any other err
// is returned as is.
func spaceErr(err error) error {
	var nr *disk.NoSpaceError
	if errors.As(err, &nr) {
		return nonRetryable(payload.ErrNoSpace, err)
	}
	return err
}

// isNoSpace reports whether err is checkSpace's NoRoom refusal.
func isNoSpace(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == payload.ErrNoSpace
}

// checkSpaceOrRetain is checkSpace for a refresh's step: when the folder
// lacks the room and the worker's retention policy limits the snapshots
// (Activities.Retention.KeepSnapshots > 0), the source's local retention
// runs first (the rule the refresh's own prune applies after it publishes:
// nothing current, nothing a running job reads, nothing a moment of the
// kept window needs) and the room is checked again. What it removed is
// logged.
func (a *Activities) checkSpaceOrRetain(ctx context.Context, source, dir string, need spaceneed.Estimate, what string) error {
	err := a.checkSpace(dir, need, what)
	if a.Retention.KeepSnapshots <= 0 || !isNoSpace(err) {
		return err
	}
	res, perr := a.pruneLocal(ctx, source)
	if perr != nil {
		a.log(ctx).Warn("retention before the refresh failed", "source", source, "error", perr)
		return err
	}
	if len(res.Removed) == 0 {
		return err
	}
	a.log(ctx).Info("retention ran before the refresh to make room", "source", source, "step", what, "removed", res.Removed)
	return a.checkSpace(dir, need, what)
}

// refreshNeed estimates the bytes a refresh of one table writes into the
// staging folder from the table as prev stores it (snapshot.MeasureTable):
// nothing for a link, spaceneed.Pair for a pair, spaceneed.Rewrite for a rewrite.
func refreshNeed(prev *snapshot.Snapshot, mt snapshot.ManifestTable, tp foldplan.TablePlan) spaceneed.Estimate {
	t := snapshot.MeasureTable(&prev.Manifest, mt, prev.Path)
	switch tp.Action {
	case foldplan.ActionPair:
		return spaceneed.Pair(t, tp.Changes)
	case foldplan.ActionRewrite:
		return spaceneed.Rewrite(t, tp.Changes)
	}
	return spaceneed.Estimate{Sure: true}
}

// sureBytes is the bytes of a Sure estimate carried in a step's input (an
// export table's Need), 0 for one that is not: needOf turns it back.
func sureBytes(e spaceneed.Estimate) uint64 {
	if !e.Sure {
		return 0
	}
	return e.Bytes
}

// needOf is the estimate of a Need carried as sureBytes: 0 is not Sure.
func needOf(n uint64) spaceneed.Estimate { return spaceneed.Estimate{Bytes: n, Sure: n > 0} }

// exportNeed is what an export writes into its output's folder: every
// table's staged files (their Need), and for a .sql export the composed
// text besides them (spaceneed.Expansion times the staged files: they are
// removed only after it is written). A job whose Need is not Sure makes
// the whole not Sure.
func exportNeed(format string, jobs []calls.ExportTableInput) spaceneed.Estimate {
	var n uint64
	for _, j := range jobs {
		if j.Need == 0 {
			return spaceneed.Estimate{}
		}
		n += j.Need
	}
	if format == payload.ExportSQL {
		n += n * spaceneed.Expansion
	}
	return spaceneed.Exact(n)
}

// rebuildNeeds estimates, for each table of plan, the bytes of its rebuilt
// table file (spaceneed.Export; .sql text when sql) from the table as its base
// snapshot's manifest records it and its window's changes.
func (a *Activities) rebuildNeeds(ctx context.Context, cat moment.Catalog, plan moment.Plan, sql bool) ([]spaceneed.Estimate, error) {
	needs := make([]spaceneed.Estimate, len(plan.Tables))
	if len(plan.Tables) == 0 {
		return needs, nil
	}
	mans, err := cat.Manifests(ctx)
	if err != nil {
		return nil, fmt.Errorf("snapshots of %s: %w", plan.Source, err)
	}
	bases := map[string]snapshot.Manifest{}
	for _, m := range mans {
		bases[m.SnapshotID] = m
	}
	type window struct{ after, upto uint64 }
	counts := map[window]map[moment.TableKey]int64{}
	for i, tp := range plan.Tables {
		w := window{tp.After, tp.Upto}
		if _, ok := counts[w]; !ok && w.upto > w.after {
			c, err := a.past(ctx, plan.Source).ChangeCounts(ctx, w.after, w.upto)
			if err != nil {
				return nil, momentErr(fmt.Errorf("count the changes of %s after seq %d up to %d: %w", plan.Source, w.after, w.upto, err))
			}
			counts[w] = c
		}
		base := bases[tp.Snapshot]
		var t spaceneed.Table
		if mt, ok := base.Table(tp.Schema, tp.Table); ok {
			t = snapshot.MeasureTable(&base, mt, a.localFiles(plan.Source, tp.Snapshot))
		}
		needs[i] = spaceneed.Export(t, counts[w][tp.Key()], sql)
	}
	return needs, nil
}

// localFiles is where the files of snapshot id of source are in the backup
// folder, or nil when it holds no such snapshot (its files are then
// measured from its manifest alone).
func (a *Activities) localFiles(source, id string) func(rel string) string {
	dir := snapshot.Folder(a.sourceDir(source)).Snapshot(id)
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	return func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
}

// checkRebuildSpace checks dir has room for table tp rebuilt from catalog
// cat and staged for a restore (spaceneed.Staging) before it is staged there,
// and returns the estimate.
func (a *Activities) checkRebuildSpace(ctx context.Context, cat moment.Catalog, source string, tp moment.TablePlan, dir string) (spaceneed.Estimate, error) {
	needs, err := a.rebuildNeeds(ctx, cat, moment.Plan{Source: source, Tables: []moment.TablePlan{tp}}, true)
	if err != nil {
		return spaceneed.Estimate{}, err
	}
	return needs[0], a.checkSpace(dir, needs[0], "stage "+tp.Key().String())
}

// filesSize is the size of the files rels in dir (a file that cannot be
// read counts 0).
func filesSize(dir string, rels []string) uint64 {
	var n uint64
	for _, rel := range rels {
		if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel))); err == nil {
			n += uint64(st.Size())
		}
	}
	return n
}
