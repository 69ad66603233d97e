package moment

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Catalog is where a rebuild finds a source's published snapshots: the
// local snapshots folder (LocalCatalog) today; snapshots on object storage
// plug in as another Catalog whose Open fetches the files a table needs
// into a local cache and returns that folder as a *snapshot.Snapshot.
type Catalog interface {
	// Manifests returns the manifest of every published snapshot, oldest
	// first.
	Manifests(ctx context.Context) ([]snapshot.Manifest, error)
	// Open returns snapshot id for reading (digest checks are the
	// reader's). A snapshot that is gone (pruned since it was listed) is an
	// error satisfying errors.Is(err, ErrSnapshotGone).
	Open(ctx context.Context, id string) (*snapshot.Snapshot, error)
}

// ErrSnapshotGone is a listed snapshot that no longer exists.
var ErrSnapshotGone = errors.New("snapshot is gone (pruned since the moment was planned)")

// LocalCatalog is the snapshots of one source folder
// (<backup-dir>/<source>), read from their manifests.
type LocalCatalog struct{ SourceDir string }

// Manifests reads the manifest of every published snapshot. A snapshot
// removed while it is listed is skipped.
func (c LocalCatalog) Manifests(ctx context.Context) ([]snapshot.Manifest, error) {
	ids, err := snapshot.ListSnapshots(c.SourceDir)
	if err != nil {
		return nil, err
	}
	out := make([]snapshot.Manifest, 0, len(ids))
	for _, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s, err := snapshot.OpenSnapshot(c.dir(id))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s.Manifest)
	}
	return out, nil
}

// Open opens the snapshot folder of id: a published snapshot, or else a
// partial one (snapshot.OpenPartial: a partial full backup's, which
// Manifests never lists; a refresh that asked for it opens it by id).
func (c LocalCatalog) Open(_ context.Context, id string) (*snapshot.Snapshot, error) {
	if _, err := snapshot.ParseSnapshotID(id); err != nil {
		return nil, err
	}
	s, err := snapshot.OpenSnapshot(c.dir(id))
	if errors.Is(err, fs.ErrNotExist) {
		s, err = snapshot.OpenPartial(c.SourceDir, id)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("snapshot %s: %w", id, ErrSnapshotGone)
	}
	return s, err
}

func (c LocalCatalog) dir(id string) string {
	return snapshot.Folder(c.SourceDir).Snapshot(id)
}
