package remote

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/dbtrail/dbtrail/internal/digest"
)

// One refresh's tables may be folded on several workers: a worker that does
// not hold the staged snapshot fetches the previous snapshot's files of its
// table from the store (FetchFile) and puts the files it wrote at their
// final names under <source>/snapshots/<id>/ (PutFile). Those objects are
// not a remote snapshot until Upload puts the manifest after them (the
// manifest vouches for every file), and Upload then finds them already
// there and skips them.

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
