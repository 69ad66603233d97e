package remote

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// DeleteSnapshot deletes the remote snapshot id: its manifest first (the
// store then no longer lists it as a complete snapshot), then every other
// object under <source>/snapshots/<id>/. A refused manifest delete leaves
// the snapshot whole and listed; a refused file delete after it names the
// files left. A delete Object Lock refuses matches storage.ErrLocked.
func (m *Mirror) DeleteSnapshot(ctx context.Context, id string) error {
	if err := m.Store.Delete(ctx, m.SnapshotName(id, snapshot.ManifestName)); err != nil {
		return err
	}
	names, err := m.names(ctx, m.snapshotPrefix(id))
	if err != nil {
		return fmt.Errorf("manifest deleted; list its files: %w", err)
	}
	var left []string
	var firstErr error
	for _, name := range names {
		if err := m.Store.Delete(ctx, name); err != nil {
			left = append(left, path.Base(name))
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	if firstErr != nil {
		return fmt.Errorf("manifest deleted, %d of %d files left (%s): %w", len(left), len(names), strings.Join(left, ", "), firstErr)
	}
	return nil
}
