package moment

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/disk"
	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// MirrorCatalog is a source's snapshots on local disk and on its remote
// store (internal/remote): Manifests lists both, each snapshot once; Open
// opens a local snapshot, and first downloads one that is only on the store
// (remote.Mirror.Download: every file checked against the manifest's
// sha256, installed under snapshots/<id> beside the local ones). So a
// moment older than the local retention, or one on a machine that lost its
// folder, rebuilds from the store.
type MirrorCatalog struct {
	Local  LocalCatalog
	Mirror *remote.Mirror
	// Progress, when set, is told how a download goes.
	Progress func(remote.Progress)
	// Free, when set, measures the local folder's free space before a
	// download: less than the download needs (Mirror.DownloadNeed,
	// exactly) refuses it, a *disk.NoSpaceError, before anything is
	// written.
	Free disk.Probe
}

// Manifests returns the local manifests and those of the snapshots only on
// the store, oldest first (by id).
func (c MirrorCatalog) Manifests(ctx context.Context) ([]snapshot.Manifest, error) {
	out, err := c.Local.Manifests(ctx)
	if err != nil {
		return nil, err
	}
	ids, err := c.Mirror.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("snapshots on %s: %w", c.Mirror.Store.Location(), err)
	}
	have := map[string]bool{}
	for _, m := range out {
		have[m.SnapshotID] = true
	}
	for _, id := range ids {
		if have[id] {
			continue
		}
		m, _, err := c.Mirror.ReadManifest(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b snapshot.Manifest) int { return strings.Compare(a.SnapshotID, b.SnapshotID) })
	return out, nil
}

// Open opens snapshot id from local disk, downloading it first when it is
// only on the store (when Free, set, finds room for it).
func (c MirrorCatalog) Open(ctx context.Context, id string) (*snapshot.Snapshot, error) {
	s, err := c.Local.Open(ctx, id)
	if !errors.Is(err, ErrSnapshotGone) {
		return s, err
	}
	if c.Free != nil {
		need, err := c.Mirror.DownloadNeed(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := disk.Check(c.Free, c.Mirror.Dir, need, "download snapshot "+id); err != nil {
			return nil, err
		}
	}
	if _, err := c.Mirror.Download(ctx, id, c.Progress); err != nil {
		return nil, err
	}
	return c.Local.Open(ctx, id)
}
