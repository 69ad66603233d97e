package activities

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/snapshot"
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
	err := disk.Check(a.Disk, path, need, what)
	var nr *disk.NoRoomError
	if errors.As(err, &nr) {
		return nonRetryable(ErrNoRoom, err)
	}
	return err
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
		n := changes
		for _, rel := range append([]string{mt.File}, mt.Chain...) {
			n += uint64(prev.Manifest.Files[rel].Size)
		}
		return n
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
