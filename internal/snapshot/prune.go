package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/retention"
)

// PruneResult is what Prune did: the ids it removed and the ids of the
// published snapshots it kept, both oldest first. Held lists the kept ids
// that retention alone would have removed (PruneHeld).
type PruneResult struct {
	Removed []string
	Kept    []string
	Held    []string
}

// Prune applies local retention to the source folder sourceDir: the newest
// keep published snapshots are kept (retention.Make with that policy alone).
func Prune(sourceDir string, keep int, log *slog.Logger) (PruneResult, error) {
	return PruneHeld(sourceDir, keep, nil, log)
}

// PruneHeld is Prune with one more reason to keep a snapshot: held(id) is
// true (its remote copy is not confirmed yet). A held snapshot is kept and
// listed in Kept and Held. nil holds nothing.
func PruneHeld(sourceDir string, keep int, held func(id string) bool, log *slog.Logger) (PruneResult, error) {
	if keep < 1 {
		return PruneResult{}, fmt.Errorf("prune snapshots: keep %d: want at least 1", keep)
	}
	return PrunePlanned(sourceDir, log, func(pl retention.Place) []retention.Item {
		in := retention.Input{Now: time.Now(), Policy: retention.Policy{KeepSnapshots: keep}, Places: []retention.Place{pl}}
		plan := retention.Make(in)
		if held == nil {
			return plan.Items
		}
		pl.Held = map[string]string{}
		for _, it := range plan.Removals() {
			if held(it.ID) {
				pl.Held[it.ID] = HeldReason
			}
		}
		in.Places = []retention.Place{pl}
		return retention.Make(in).Items
	})
}

// HeldReason is why a local snapshot whose remote copy is not confirmed is
// kept; PrunePlanned lists the snapshots kept for it in PruneResult.Held.
const HeldReason = "held: its remote copy is not confirmed"

// PrunePlanned removes the local snapshots that plan decides to remove.
// plan is given the folder's listing (LocalPlace) and returns a decision
// per snapshot (retention.Make's items of place local); a snapshot it does
// not name is kept. A current link that exists but does not resolve is an
// error and nothing is removed. Folders under snapshots/ without a manifest
// (not published) are never touched.
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
// another. A prune must not run concurrently with another of the same
// source. Kept lists the kept ids, Held those kept for a Held reason.
func PrunePlanned(sourceDir string, log *slog.Logger, plan func(retention.Place) []retention.Item) (PruneResult, error) {
	if log == nil {
		log = slog.Default()
	}
	if err := emptyTrash(sourceDir, log); err != nil {
		return PruneResult{}, fmt.Errorf("prune snapshots: empty %s: %w", TrashDir, err)
	}
	pl, err := LocalPlace(sourceDir)
	if err != nil {
		return PruneResult{}, fmt.Errorf("prune snapshots: %w", err)
	}
	var res PruneResult
	for _, it := range plan(pl) {
		if it.Place != retention.PlaceLocal {
			continue
		}
		if it.Keep {
			res.Kept = append(res.Kept, it.ID)
			if it.Reason == HeldReason {
				res.Held = append(res.Held, it.ID)
				log.Info("snapshot kept: held", "source_dir", sourceDir, "snapshot", it.ID, "reason", it.Reason)
			}
			continue
		}
		if err := RemoveSnapshot(sourceDir, it.ID); err != nil {
			return res, err
		}
		res.Removed = append(res.Removed, it.ID)
		log.Info("snapshot pruned", "source_dir", sourceDir, "snapshot", it.ID, "reason", it.Reason)
	}
	return res, nil
}

// LocalPlace lists the published snapshots of sourceDir for retention:
// each id with the time it names and its manifest's seq, and the id current
// names ("" without a current link; an error when the link exists but does
// not resolve).
func LocalPlace(sourceDir string) (retention.Place, error) {
	ids, err := ListSnapshots(sourceDir)
	if err != nil {
		return retention.Place{}, err
	}
	cur, err := currentForPrune(sourceDir)
	if err != nil {
		return retention.Place{}, err
	}
	pl := retention.Place{Name: retention.PlaceLocal, Current: cur}
	for _, id := range ids {
		made, err := ParseSnapshotID(id)
		if err != nil {
			return retention.Place{}, err
		}
		m, err := readManifest(Folder(sourceDir).Snapshot(id))
		if err != nil {
			return retention.Place{}, fmt.Errorf("snapshot %s: %w", id, err)
		}
		pl.Snapshots = append(pl.Snapshots, retention.Snapshot{ID: id, Made: made, Seq: m.Position.Seq})
	}
	return pl, nil
}

// RemoveSnapshot removes the published snapshot id of sourceDir
// crash-safely (PrunePlanned): renamed to .trash/<id>, then deleted.
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
