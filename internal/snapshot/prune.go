package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// TrashDir is the folder of a source where Prune moves a snapshot before
// deleting it: <source dir>/.trash/<id>. Readers never look at it.
const TrashDir = ".trash"

// PruneResult is what Prune did: the ids it removed and the ids of the
// published snapshots it kept, both oldest first. Held lists the kept ids
// that retention alone would have removed (PruneHeld).
type PruneResult struct {
	Removed []string
	Kept    []string
	Held    []string
}

// Prune applies local retention to the source folder sourceDir.
//
// Kept: the newest keep published snapshots (ListSnapshots order), the
// snapshot current names, and every snapshot whose id is greater than
// current's (a publish may be in progress: it renames into snapshots/ before
// it swaps current). keep must be at least 1. With no current link at all,
// only the newest keep are kept; a current link that exists but does not
// resolve (ResolveCurrent) is an error and nothing is removed. Folders under
// snapshots/ without a manifest (not published) are never touched.
//
// Every other published snapshot is removed crash-safely: snapshots/<id> is
// first renamed to .trash/<id> (one atomic rename, then snapshots/ and .trash/
// are fsynced), and only then deleted. So a snapshot is either whole under
// snapshots/ or out of sight in .trash/: a half-deleted folder never stays
// under snapshots/ with its manifest.json for ListSnapshots to list. Every
// Prune starts by emptying .trash/ of what an earlier, interrupted Prune left.
//
// Snapshots share files through hard links (Builder.Link): removing one
// snapshot only drops its names for those files, so the data stays on disk as
// long as a kept snapshot links it, and removing a snapshot never breaks
// another. Prune must not run concurrently with another Prune of the same
// source.
func Prune(sourceDir string, keep int, log *slog.Logger) (PruneResult, error) {
	return PruneHeld(sourceDir, keep, nil, log)
}

// PruneHeld is Prune with one more reason to keep a snapshot: held(id) is
// true (its remote copy is not confirmed yet). A held snapshot is kept and
// listed in Kept and Held; held is asked only about snapshots retention
// would remove. nil holds nothing.
func PruneHeld(sourceDir string, keep int, held func(id string) bool, log *slog.Logger) (PruneResult, error) {
	if keep < 1 {
		return PruneResult{}, fmt.Errorf("prune snapshots: keep %d: want at least 1", keep)
	}
	if log == nil {
		log = slog.Default()
	}
	if err := emptyTrash(sourceDir, log); err != nil {
		return PruneResult{}, fmt.Errorf("prune snapshots: empty %s: %w", TrashDir, err)
	}
	ids, err := ListSnapshots(sourceDir)
	if err != nil {
		return PruneResult{}, fmt.Errorf("prune snapshots: %w", err)
	}
	cur, err := currentForPrune(sourceDir)
	if err != nil {
		return PruneResult{}, fmt.Errorf("prune snapshots: %w", err)
	}
	var res PruneResult
	for i, id := range ids {
		if i >= len(ids)-keep || (cur != "" && id >= cur) {
			res.Kept = append(res.Kept, id)
			continue
		}
		if held != nil && held(id) {
			res.Kept = append(res.Kept, id)
			res.Held = append(res.Held, id)
			log.Info("snapshot kept: held", "source_dir", sourceDir, "snapshot", id)
			continue
		}
		if err := trashSnapshot(sourceDir, id); err != nil {
			return res, fmt.Errorf("prune snapshot %s: %w", id, err)
		}
		res.Removed = append(res.Removed, id)
		if err := os.RemoveAll(filepath.Join(sourceDir, TrashDir, id)); err != nil {
			return res, fmt.Errorf("prune snapshot %s: %w", id, err)
		}
		log.Info("snapshot pruned", "source_dir", sourceDir, "snapshot", id)
	}
	return res, nil
}

// currentForPrune returns the id current names, "" when there is no current
// link, and an error when the link exists but does not resolve.
func currentForPrune(sourceDir string) (string, error) {
	if _, err := os.Lstat(filepath.Join(sourceDir, CurrentLink)); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return ResolveCurrent(sourceDir)
}

// emptyTrash removes everything under <sourceDir>/.trash.
func emptyTrash(sourceDir string, log *slog.Logger) error {
	trash := filepath.Join(sourceDir, TrashDir)
	ents, err := os.ReadDir(trash)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(trash, e.Name())); err != nil {
			return err
		}
		log.Info("leftover trash removed", "source_dir", sourceDir, "entry", e.Name())
	}
	return nil
}

// trashSnapshot moves snapshots/<id> to .trash/<id> durably: after it
// returns, a crash leaves the snapshot out of snapshots/.
func trashSnapshot(sourceDir, id string) error {
	trash := filepath.Join(sourceDir, TrashDir)
	if err := os.MkdirAll(trash, 0o755); err != nil {
		return err
	}
	if err := syncDir(sourceDir); err != nil {
		return err
	}
	snaps := filepath.Join(sourceDir, SnapshotsDir)
	if err := os.Rename(filepath.Join(snaps, id), filepath.Join(trash, id)); err != nil {
		return err
	}
	if err := syncDir(snaps); err != nil {
		return err
	}
	if err := syncDir(trash); err != nil {
		return err
	}
	return crashPoint("prune-trashed")
}
