package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/dbtrail/dbtrail/internal/filemode"
)

// PruneResult is what Prune did: the ids it removed and the ids of the
// published snapshots left in the folder, both oldest first.
type PruneResult struct {
	Removed []string
	Kept    []string
}

// Published is one published snapshot of a source folder: its id, the
// time the id names and its manifest's seq (the last event it holds).
type Published struct {
	ID   string
	Made time.Time
	Seq  uint64
}

// Listing is what a prune's caller decides on: the published snapshots of
// a source folder, oldest first, and the id its current link names.
type Listing struct {
	Snapshots []Published
	// Current is "" when the folder has no current link.
	Current string
}

// Prune removes the published snapshots ids of the source folder
// sourceDir; which ones is the caller's decision (the retention policy:
// package retention, applied by the activities). Every id is checked
// first, and one that is not a published snapshot of the folder, that is
// the current one or newer than it (a publish in progress), or a current
// link that exists but does not resolve, refuses the whole prune: nothing
// is removed. A prune must not run concurrently with another of the same
// source (the caller holds LockPublish).
//
// Each removal is crash-safe: snapshots/<id> is first renamed to
// .trash/<id> (one atomic rename, then snapshots/ and .trash/ are fsynced),
// and only then deleted. So a snapshot is either whole under snapshots/ or
// out of sight in .trash/: a half-deleted folder never stays under
// snapshots/ with its manifest.json for ListSnapshots to list. Every prune
// starts by emptying .trash/ of what an earlier, interrupted one left.
//
// Snapshots share files through hard links (Builder.Link): removing one
// snapshot only drops its names for those files, so the data stays on disk
// as long as a kept snapshot links it, and removing a snapshot never breaks
// another. Folders under snapshots/ without a manifest (not published) are
// never touched.
func Prune(sourceDir string, ids []string, log *slog.Logger) (PruneResult, error) {
	if log == nil {
		log = slog.Default()
	}
	if err := emptyTrash(sourceDir, log); err != nil {
		return PruneResult{}, fmt.Errorf("prune snapshots: empty %s: %w", TrashDir, err)
	}
	published, err := ListSnapshots(sourceDir)
	if err != nil {
		return PruneResult{}, fmt.Errorf("prune snapshots: %w", err)
	}
	cur, err := currentForPrune(sourceDir)
	if err != nil {
		return PruneResult{}, fmt.Errorf("prune snapshots: %w", err)
	}
	if err := checkRemovable(sourceDir, published, cur, ids); err != nil {
		return PruneResult{}, err
	}
	var res PruneResult
	for _, id := range published {
		if !slices.Contains(ids, id) {
			res.Kept = append(res.Kept, id)
			continue
		}
		if err := RemoveSnapshot(sourceDir, id); err != nil {
			return res, err
		}
		res.Removed = append(res.Removed, id)
		log.Info("snapshot pruned", "source_dir", sourceDir, "snapshot", id)
	}
	return res, nil
}

// checkRemovable refuses ids unless each is one of the published
// snapshots of sourceDir and older than its current one cur ("" : no
// current link).
func checkRemovable(sourceDir string, published []string, cur string, ids []string) error {
	for _, id := range ids {
		switch {
		case !slices.Contains(published, id):
			return fmt.Errorf("prune snapshots: %s is not a published snapshot of %s; nothing removed", id, sourceDir)
		case cur != "" && id >= cur:
			return fmt.Errorf("prune snapshots: %s is the current snapshot of %s or newer than it (%s); nothing removed", id, sourceDir, cur)
		}
	}
	return nil
}

// List lists the published snapshots of sourceDir with the time each id
// names and each manifest's seq, and the id current names ("" without a
// current link; an error when the link exists but does not resolve).
func List(sourceDir string) (Listing, error) {
	ids, err := ListSnapshots(sourceDir)
	if err != nil {
		return Listing{}, err
	}
	cur, err := currentForPrune(sourceDir)
	if err != nil {
		return Listing{}, err
	}
	l := Listing{Current: cur}
	for _, id := range ids {
		made, err := ParseSnapshotID(id)
		if err != nil {
			return Listing{}, err
		}
		m, err := readManifest(Folder(sourceDir).Snapshot(id))
		if err != nil {
			return Listing{}, fmt.Errorf("snapshot %s: %w", id, err)
		}
		l.Snapshots = append(l.Snapshots, Published{ID: id, Made: made, Seq: m.Position.Seq})
	}
	return l, nil
}

// RemoveSnapshot removes the published snapshot id of sourceDir
// crash-safely (Prune): renamed to .trash/<id>, then deleted.
func RemoveSnapshot(sourceDir, id string) error {
	if err := trashSnapshot(sourceDir, id); err != nil {
		return fmt.Errorf("prune snapshot %s: %w", id, err)
	}
	if err := os.RemoveAll(Folder(sourceDir).Trash(id)); err != nil {
		return fmt.Errorf("prune snapshot %s: %w", id, err)
	}
	return nil
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
	trash := Folder(sourceDir).Trash()
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
	return moveToTrash(sourceDir, Folder(sourceDir).Snapshots(), id)
}

// moveToTrash moves <from>/<id> to .trash/<id> durably, from and .trash
// fsynced.
func moveToTrash(sourceDir, from, id string) error {
	trash := Folder(sourceDir).Trash()
	if err := os.MkdirAll(trash, filemode.Dir()); err != nil {
		return err
	}
	if err := syncDir(sourceDir); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(from, id), filepath.Join(trash, id)); err != nil {
		return err
	}
	if err := syncDir(from); err != nil {
		return err
	}
	if err := syncDir(trash); err != nil {
		return err
	}
	return crashPoint("prune-trashed")
}
