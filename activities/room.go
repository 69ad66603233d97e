package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"go.temporal.io/sdk/temporal"
)

// bytesPerChange is what one change of a window is taken to add to the
// files a pair or a rewrite writes (a compressed row of a few hundred
// bytes, generously).
const bytesPerChange = 512

// checkRoom refuses, non-retryable (NoRoom), a step that needs about need
// bytes in path when the file system holding it has less (with
// disk.Margin): it fails at once, naming what it needs and what is free,
// instead of at the end of the write. Space freed makes the next run go.
func (a *Activities) checkRoom(path string, need uint64, what string) error {
	return roomErr(disk.Check(a.Disk, path, need, what))
}

// roomErr marks a *disk.NoRoomError non-retryable NoRoom; any other err
// is returned as is.
func roomErr(err error) error {
	var nr *disk.NoRoomError
	if errors.As(err, &nr) {
		return nonRetryable(ErrNoRoom, err)
	}
	return err
}

// isNoRoom reports whether err is checkRoom's NoRoom refusal.
func isNoRoom(err error) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == ErrNoRoom
}

// checkRoomOrRetain is checkRoom for a refresh's step: when the folder
// lacks the room and the refresh has a retention policy (KeepSnapshots >
// 0), the source's local retention runs first (the rule the refresh's own
// prune applies after it publishes: nothing current, nothing a running
// job reads, nothing a moment of the kept window needs) and the room is
// checked again. What it removed is logged.
func (a *Activities) checkRoomOrRetain(ctx context.Context, source string, policy retention.Policy, dir string, need uint64, what string) error {
	err := a.checkRoom(dir, need, what)
	if policy.KeepSnapshots <= 0 || !isNoRoom(err) {
		return err
	}
	res, perr := a.pruneLocal(ctx, source, policy)
	if perr != nil {
		a.log(ctx).Warn("retention before the refresh failed", "source", source, "error", perr)
		return err
	}
	if len(res.Removed) == 0 {
		return err
	}
	a.log(ctx).Info("retention ran before the refresh to make room", "source", source, "step", what, "removed", res.Removed)
	return a.checkRoom(dir, need, what)
}

// refreshNeed estimates the bytes a refresh of one table writes into the
// staging folder: nothing for a link; its changes for a pair; the table
// as stored (table file and chain) and its changes for a rewrite.
func refreshNeed(prev *snapshot.Snapshot, mt snapshot.ManifestTable, tp foldplan.TablePlan) uint64 {
	changes := uint64(max(tp.Changes, 0)) * bytesPerChange
	switch tp.Action {
	case foldplan.ActionPair:
		return changes
	case foldplan.ActionRewrite:
		return changes + prev.Manifest.FilesSize(append([]string{mt.File}, mt.Chain...)...)
	}
	return 0
}

// dumpFilesSize is the size of a dumped table's data files: about what its
// table file takes at most (Parquet is smaller than the dump's SQL text).
func dumpFilesSize(dumpDir string, files []string) uint64 {
	var n uint64
	for _, f := range files {
		if st, err := os.Stat(filepath.Join(dumpDir, f)); err == nil {
			n += uint64(st.Size())
		}
	}
	return n
}

// sqlTextFactor is how many times the size of its staged table files a
// .sql export's text is taken to be: Parquet's dictionaries and
// compression against INSERT statements' plain text (docs/workflows.md).
const sqlTextFactor = 4

// exportNeed is the bytes an export writes into its output's folder: every
// table's staged files, and for a .sql export the composed text besides
// them (the staged files are removed only after it is written).
func exportNeed(format string, jobs []ExportTableInput) uint64 {
	var n uint64
	for _, j := range jobs {
		n += j.Need
	}
	if format == ExportSQL {
		n += n * sqlTextFactor
	}
	return n
}

// rebuildNeeds estimates, for each table of plan, the bytes of its rebuilt
// table file: the table as its base snapshot stores it (table file and
// chain) and its window's changes at bytesPerChange each.
func (a *Activities) rebuildNeeds(ctx context.Context, cat moment.Catalog, plan moment.Plan) ([]uint64, error) {
	needs := make([]uint64, len(plan.Tables))
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
		needs[i] = base.TableSize(tp.Schema, tp.Table) + uint64(max(counts[w][tp.Key()], 0))*bytesPerChange
	}
	return needs, nil
}

// checkRebuildRoom checks dir has room for table tp rebuilt from catalog
// cat (rebuildNeeds) before a restore stages it there.
func (a *Activities) checkRebuildRoom(ctx context.Context, cat moment.Catalog, source string, tp moment.TablePlan, dir string) error {
	needs, err := a.rebuildNeeds(ctx, cat, moment.Plan{Source: source, Tables: []moment.TablePlan{tp}})
	if err != nil {
		return err
	}
	return a.checkRoom(dir, needs[0]*scratchExpansion, "stage "+tp.Key().String())
}

// scratchExpansion is how much larger a restore's staged table is than
// the compressed table files it is rebuilt from: staged runs are written
// without compression or dictionaries (snapshot.WriterOptions.Scratch).
const scratchExpansion = 4
