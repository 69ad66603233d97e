package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// One refresh's tables may be folded on several workers: a worker that does
// not hold the staged snapshot fetches the previous snapshot's files of its
// table from the store (FetchFile) and puts the files it wrote under a
// folder of its own attempt, <source>/parts/<id>/<attempt>/<rel> (PutPart),
// never at the snapshot's final names: an attempt given up on (it has not
// noticed yet) cannot change a file the snapshot's manifest vouches for.
// The stager fetches them from there (FetchPart); Upload copies them
// inside the store to their content objects (a part whose digest is not
// the manifest's is not copied) and deletes <source>/parts/<id>/ once the
// snapshot is confirmed. A refresh that fails deletes its parts and any
// object of its id without a manifest (DiscardUnpublished).

// PartsDir is the folder, under a source's folder on the store, of the
// files shared tables put.
const PartsDir = "parts"

// partsPrefix is the prefix of every part put for snapshot id.
func (m *Mirror) partsPrefix(id string) string { return path.Join(m.Source, PartsDir, id) + "/" }

// PartName is the remote name of file rel that the attempt named attempt
// put for snapshot id.
func (m *Mirror) PartName(id, attempt, rel string) string {
	return path.Join(m.Source, PartsDir, id, attempt, rel)
}

// PutPart puts the local file p as file rel of attempt for snapshot id
// unless the store already holds it with digest d, then confirms it (size
// and sha256 read back).
func (m *Mirror) PutPart(ctx context.Context, id, attempt, rel, p string, d digest.Digest) error {
	if err := m.send(ctx, m.PartName(id, attempt, rel), d, &tracker{}, func() (io.ReadCloser, error) { return os.Open(p) }); err != nil {
		return fmt.Errorf("put %s of attempt %s for snapshot %s on %s: %w", rel, attempt, id, m.Store.Location(), err)
	}
	return nil
}

// FetchPart writes file rel that attempt put for snapshot id to the local
// path p, checking digest d as it writes (a *snapshot.DigestError when the
// object differs); a file already at p with digest d is kept.
func (m *Mirror) FetchPart(ctx context.Context, id, attempt, rel, p string, d digest.Digest) error {
	if _, err := m.fetch(ctx, []string{m.PartName(id, attempt, rel)}, p, rel, d); err != nil {
		return fmt.Errorf("fetch %s of attempt %s for snapshot %s from %s: %w", rel, attempt, id, m.Store.Location(), err)
	}
	return nil
}

// parts lists the objects under <source>/parts/<id>/: for each file rel,
// the names of the attempts' objects.
func (m *Mirror) parts(ctx context.Context, id string) (map[string][]string, error) {
	prefix := m.partsPrefix(id)
	names, err := m.names(ctx, prefix)
	if err != nil {
		return nil, fmt.Errorf("list parts of snapshot %s: %w", id, err)
	}
	out := map[string][]string{}
	for _, name := range names {
		if _, rel, ok := strings.Cut(strings.TrimPrefix(name, prefix), "/"); ok {
			out[rel] = append(out[rel], name)
		}
	}
	return out, nil
}

// copyPart makes the content object name hold d from one of the parts
// objects (server-side copy) and says whether it did; a part whose digest
// is not d is passed over.
func (m *Mirror) copyPart(ctx context.Context, name string, d digest.Digest, parts []string, t *tracker) (bool, error) {
	for _, p := range parts {
		ok, err := m.holds(ctx, p, d)
		if err != nil {
			return false, err
		}
		if !ok {
			continue
		}
		if err := m.Store.Copy(ctx, p, name); err != nil {
			return false, err
		}
		return true, m.checkObject(ctx, name, d, t, kindCopied)
	}
	return false, nil
}

// FetchFile writes file rel of the store's snapshot id to the local path p
// (its content object, or its name under the snapshot for one uploaded
// before content objects), checking digest d as it writes (a
// *snapshot.DigestError when the object differs); a file already at p with
// digest d is kept.
func (m *Mirror) FetchFile(ctx context.Context, id, rel, p string, d digest.Digest) error {
	names, err := m.fileNames(id, rel, d)
	if err == nil {
		_, err = m.fetch(ctx, names, p, rel, d)
	}
	if err != nil {
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

// DiscardUnpublished deletes every object under <source>/parts/<id>/ (the
// shared tables' files) and, when the store holds no manifest of id, every
// object under <source>/snapshots/<id>/: what the shared tables of a
// refresh that failed put there (before parts existed) or the start of an
// upload that never finished before content objects (the snapshot id is
// never reused, so nothing else would ever delete them). The content
// objects an unfinished upload put are shared by content and left to
// SweepObjects, which deletes them once no manifest refers to them. A snapshot whose manifest is on the store
// is published and never touched.
// A delete Object Lock refuses is recorded in Locked, not an error; any
// other error is returned (a retry deletes what is left). Running it
// again is harmless.
func (m *Mirror) DiscardUnpublished(ctx context.Context, id string) (Discarded, error) {
	var out Discarded
	if _, err := snapshot.ParseSnapshotID(id); err != nil {
		return out, err
	}
	manifest := m.SnapshotName(id, snapshot.ManifestName)
	names, err := m.names(ctx, m.snapshotPrefix(id))
	if err != nil {
		return out, fmt.Errorf("list objects of snapshot %s on %s: %w", id, m.Store.Location(), err)
	}
	if slices.Contains(names, manifest) {
		out.Published, names = true, nil
	}
	parts, err := m.names(ctx, m.partsPrefix(id))
	if err != nil {
		return out, fmt.Errorf("list parts of snapshot %s on %s: %w", id, m.Store.Location(), err)
	}
	out.Deleted, out.Locked, err = m.deleteNames(ctx, append(names, parts...), "unpublished snapshot "+id)
	return out, err
}

// deleteNames deletes names in order and returns those it deleted and
// those Object Lock retains (storage.ErrLocked: left as they were, the
// next name tried). Any other error stops it, returned naming the object,
// of what (e.g. "unpublished snapshot <id>") and the store.
func (m *Mirror) deleteNames(ctx context.Context, names []string, of string) (deleted, locked []string, err error) {
	for _, name := range names {
		err := m.Store.Delete(ctx, name)
		switch {
		case errors.Is(err, storage.ErrLocked):
			locked = append(locked, name)
		case err != nil:
			return deleted, locked, fmt.Errorf("delete %s of %s on %s: %w", name, of, m.Store.Location(), err)
		default:
			deleted = append(deleted, name)
		}
	}
	return deleted, locked, nil
}

// dropParts deletes the parts of snapshot id (n files listed) once it is
// confirmed on the store; what it cannot delete (Object Lock) is logged
// and stays: the upload is done.
func (m *Mirror) dropParts(ctx context.Context, id string, n int) {
	if n == 0 {
		return
	}
	var left []string
	names, err := m.names(ctx, m.partsPrefix(id))
	for _, name := range names {
		if m.Store.Delete(ctx, name) != nil {
			left = append(left, name)
		}
	}
	if err != nil || len(left) > 0 {
		m.Log.Warn("parts of an uploaded snapshot not deleted", "snapshot", id, "location", m.Store.Location(),
			"left", strings.Join(left, ", "), "error", fmt.Sprint(err))
	}
}
