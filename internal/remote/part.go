package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// One refresh's tables may be folded on several workers: a worker that does
// not hold the staged snapshot fetches the previous snapshot's files of its
// table from the store (FetchFile) and puts the files it wrote at their
// final names under <source>/snapshots/<id>/ (PutFile). Those objects are
// not a remote snapshot until Upload puts the manifest after them (the
// manifest vouches for every file), and Upload then finds them already
// there and skips them. A refresh that fails before its manifest is on the
// store deletes them (DiscardUnpublished).

// PutFile puts the local file p as file rel of snapshot id unless the store
// already holds it with digest d, then confirms it (size and sha256 read
// back).
func (m *Mirror) PutFile(ctx context.Context, id, rel, p string, d digest.Digest) error {
	if err := m.send(ctx, m.SnapshotName(id, rel), d, &tracker{}, func() (io.ReadCloser, error) { return os.Open(p) }); err != nil {
		return fmt.Errorf("put %s of snapshot %s on %s: %w", rel, id, m.Store.Location(), err)
	}
	return nil
}

// FetchFile writes file rel of the store's snapshot id to the local path p,
// checking digest d as it writes (a *snapshot.DigestError when the object
// differs); a file already at p with digest d is kept.
func (m *Mirror) FetchFile(ctx context.Context, id, rel, p string, d digest.Digest) error {
	if _, err := m.fetch(ctx, m.SnapshotName(id, rel), p, rel, d); err != nil {
		return fmt.Errorf("fetch %s of snapshot %s from %s: %w", rel, id, m.Store.Location(), err)
	}
	return nil
}

// Discarded says what DiscardUnpublished did: Published when the store
// holds the snapshot's manifest (then nothing was touched), the names it
// deleted, and those Object Lock retains (left as they were).
type Discarded struct {
	Published bool
	Deleted   []string
	Locked    []string
}

// DiscardUnpublished deletes every object under <source>/snapshots/<id>/
// when the store holds no manifest of id: what the shared tables of a
// refresh that failed put there, or the start of an upload that never
// finished (the snapshot id is never reused, so nothing else would ever
// delete them). A snapshot whose manifest is on the store is published
// and never touched, even when its manifest shows up only in the listing.
// A delete Object Lock refuses is recorded in Locked, not an error; any
// other error is returned (a retry deletes what is left). Running it
// again is harmless.
func (m *Mirror) DiscardUnpublished(ctx context.Context, id string) (Discarded, error) {
	var out Discarded
	if _, err := snapshot.ParseSnapshotID(id); err != nil {
		return out, err
	}
	manifest := m.SnapshotName(id, snapshot.ManifestName)
	var names []string
	if err := m.Store.List(ctx, m.SnapshotName(id, "")+"/", func(info storage.Info) error {
		names = append(names, info.Name)
		return nil
	}); err != nil {
		return out, fmt.Errorf("list objects of snapshot %s on %s: %w", id, m.Store.Location(), err)
	}
	if slices.Contains(names, manifest) {
		out.Published = true
		return out, nil
	}
	for _, name := range names {
		err := m.Store.Delete(ctx, name)
		switch {
		case errors.Is(err, storage.ErrLocked):
			out.Locked = append(out.Locked, name)
		case err != nil:
			return out, fmt.Errorf("delete %s of unpublished snapshot %s on %s: %w", name, id, m.Store.Location(), err)
		default:
			out.Deleted = append(out.Deleted, name)
		}
	}
	return out, nil
}
