package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// UploadStats is what the upload of one snapshot did. Files counts the
// snapshot's objects with its manifest; each was sent (Uploaded), copied
// inside the store from the previous snapshot (Copied), or found already
// there with its digest (Skipped: an earlier attempt sent it).
type UploadStats struct {
	SnapshotID    string
	Files         int
	Uploaded      int
	Copied        int
	Skipped       int
	BytesUploaded int64 // bytes read from local files and sent
	BytesCopied   int64
	BytesSkipped  int64
	// Current is the snapshot the remote current pointer names after the
	// upload: this one, or a newer one that was uploaded first (then the
	// pointer is left there).
	Current string
}

// Upload copies the published local snapshot id to the store and confirms
// it:
//
//  1. every file the manifest lists goes to <source>/snapshots/<id>/<rel>:
//     a file already there with its size and sha256 is skipped (a resumed
//     upload), a file that Prev's remote manifest lists at the same path
//     with the same sha256 is copied inside the store, any other is sent
//     from the local file, the store checking its digest; then each object
//     is confirmed with Stat (size and sha256; where the store does not
//     record the sha256, the object is read back and hashed);
//  2. manifest.json (the local bytes) goes up last, and is confirmed;
//  3. the current pointer moves to this snapshot (advance), unless it
//     already names a newer one;
//  4. the local marker .remote/<id>.ok is written;
//  5. the parts a spread refresh put for id under <source>/parts/<id>/
//     are deleted (dropParts: a part it cannot delete, Object Lock or
//     another error, is logged and stays), their owner record left for
//     SweepParts.
//
// progress, when not nil, is called after each object. A local file whose
// content differs from the manifest fails the upload with a
// *storage.DigestError and nothing is stored under its name. The parts of
// id are the only objects an upload deletes: nothing under
// <source>/snapshots/ is.
func (m *Mirror) Upload(ctx context.Context, id string, progress func(Progress)) (UploadStats, error) {
	st, err := m.upload(ctx, id, progress)
	if err != nil {
		return st, fmt.Errorf("upload snapshot %s to %s: %w", id, m.Store.Location(), err)
	}
	return st, nil
}

func (m *Mirror) upload(ctx context.Context, id string, progress func(Progress)) (UploadStats, error) {
	mb, err := m.localManifest(id)
	if err != nil {
		return UploadStats{}, err
	}
	man, err := snapshot.ParseManifest(mb)
	if err != nil {
		return UploadStats{}, err
	}
	if man.SnapshotID != id {
		return UploadStats{}, fmt.Errorf("local manifest is for snapshot %s", man.SnapshotID)
	}
	if err := m.checkNoConflict(ctx, id, mb); err != nil {
		return UploadStats{}, err
	}
	prev, err := m.remotePrev(ctx, man.Prev)
	if err != nil {
		return UploadStats{}, err
	}
	parts, err := m.parts(ctx, id)
	if err != nil {
		return UploadStats{}, err
	}
	t := newTracker(id, man, int64(len(mb)), progress)
	rels := make([]string, 0, len(man.Files))
	for rel := range man.Files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(m.parallel())
	for _, rel := range rels {
		g.Go(func() error { return m.uploadFile(gctx, man, rel, prev, parts[rel], t) })
	}
	if err := g.Wait(); err != nil {
		return t.stats(), err
	}
	md := digest.Digest{SHA256: sha256Hex(mb), Size: int64(len(mb))}
	if err := m.send(ctx, m.SnapshotName(id, snapshot.ManifestName), md, t,
		func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(mb)), nil }); err != nil {
		return t.stats(), err
	}
	st := t.stats()
	if st.Current, err = m.advance(ctx, id, man.Position); err != nil {
		return st, err
	}
	if err := m.confirm(id, mb); err != nil {
		return st, err
	}
	m.dropParts(ctx, id, len(parts))
	m.Log.Info("snapshot uploaded", "snapshot", id, "location", m.Store.Location(), "files", st.Files,
		"uploaded", st.Uploaded, "copied", st.Copied, "skipped", st.Skipped,
		"bytes_uploaded", st.BytesUploaded, "bytes_copied", st.BytesCopied, "remote_current", st.Current)
	return st, nil
}

// checkNoConflict fails with ErrConflict when the store already has a
// manifest of id with other bytes than mb (another snapshot that got the
// same id); the same bytes are a repeated upload.
func (m *Mirror) checkNoConflict(ctx context.Context, id string, mb []byte) error {
	_, rb, err := m.ReadManifest(ctx, id)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !bytes.Equal(rb, mb):
		return fmt.Errorf("%w: %s has a manifest that differs from the local one", ErrConflict, m.SnapshotName(id, snapshot.ManifestName))
	}
	return nil
}

// remotePrev returns the files of the remote manifest of prev, the snapshot
// a refresh was folded from, or nil when there is none: prev is "" (a full
// backup) or its remote manifest does not exist (never uploaded, so there is
// nothing to copy from).
func (m *Mirror) remotePrev(ctx context.Context, prev string) (map[string]digest.Digest, error) {
	if prev == "" {
		return nil, nil
	}
	man, _, err := m.ReadManifest(ctx, prev)
	if errors.Is(err, fs.ErrNotExist) {
		m.Log.Warn("previous snapshot is not on the store: every file is sent", "snapshot", prev,
			"location", m.Store.Location())
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return man.Files, nil
}

// uploadFile puts one file of the snapshot: skipped when already there,
// copied from Prev's object when Prev holds it, or from a shared table's
// part (parts: its objects) with the file's digest, sent otherwise.
func (m *Mirror) uploadFile(ctx context.Context, man snapshot.Manifest, rel string, prev map[string]digest.Digest, parts []string,
	t *tracker) error {
	d := digest.Digest(man.Files[rel])
	name := m.SnapshotName(man.SnapshotID, rel)
	if pd, ok := prev[rel]; ok && digest.Digest(pd) == d {
		there, err := m.holds(ctx, name, d)
		if err != nil || there {
			t.add(kindSkipped, d.Size)
			return err
		}
		err = m.Store.Copy(ctx, m.SnapshotName(man.Prev, rel), name)
		if err == nil {
			return m.check(ctx, name, d, t, kindCopied)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		m.Log.Warn("previous snapshot's object is missing; sending the file", "object", m.SnapshotName(man.Prev, rel), "error", err)
	}
	if done, err := m.copyPart(ctx, name, d, parts, t); done || err != nil {
		return err
	}
	local := filepath.Join(snapshot.Folder(m.Dir).Snapshot(man.SnapshotID), filepath.FromSlash(rel))
	return m.send(ctx, name, d, t, func() (io.ReadCloser, error) { return os.Open(local) })
}

// send puts the content open yields under name unless name already holds
// d, then confirms it.
func (m *Mirror) send(ctx context.Context, name string, d digest.Digest, t *tracker, open func() (io.ReadCloser, error)) error {
	there, err := m.holds(ctx, name, d)
	if err != nil {
		return err
	}
	if there {
		t.add(kindSkipped, d.Size)
		return nil
	}
	r, err := open()
	if err != nil {
		return err
	}
	defer r.Close()
	cr := &countingReader{r: r}
	if err := m.Store.Put(ctx, name, cr, d); err != nil {
		return err
	}
	t.sent(cr.n)
	return m.check(ctx, name, d, t, kindUploaded)
}

// check confirms that name holds d after a write and counts it as kind.
func (m *Mirror) check(ctx context.Context, name string, d digest.Digest, t *tracker, kind int) error {
	ok, err := m.holds(ctx, name, d)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: the stored object does not have the size %d and sha256 %s written", name, d.Size, d.SHA256)
	}
	t.add(kind, d.Size)
	return nil
}

// holds reports whether the store has name with digest d: its Stat gives
// the size and sha256; where the store does not record the sha256, the
// object is read and hashed.
func (m *Mirror) holds(ctx context.Context, name string, d digest.Digest) (bool, error) {
	info, err := m.Store.Stat(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if info.Size != d.Size {
		return false, nil
	}
	if info.SHA256 != "" {
		return info.SHA256 == d.SHA256, nil
	}
	rc, err := m.Store.Open(ctx, name)
	if err != nil {
		return false, err
	}
	defer rc.Close()
	got, err := digest.Of(rc)
	if err != nil {
		return false, err
	}
	return got == d, nil
}

// Kinds of a finished object, for the tracker.
const (
	kindUploaded = iota
	kindCopied
	kindSkipped
)

// tracker counts an upload's objects and bytes and reports progress.
type tracker struct {
	mu       sync.Mutex
	st       UploadStats
	bytes    int64 // all bytes of the snapshot, manifest included
	done     int64
	progress func(Progress)
}

func newTracker(id string, man snapshot.Manifest, manifestSize int64, progress func(Progress)) *tracker {
	t := &tracker{st: UploadStats{SnapshotID: id, Files: len(man.Files) + 1}, bytes: manifestSize, progress: progress}
	for _, d := range man.Files {
		t.bytes += d.Size
	}
	return t
}

// sent counts bytes read from a local file by a Put.
func (t *tracker) sent(n int64) {
	t.mu.Lock()
	t.st.BytesUploaded += n
	t.mu.Unlock()
}

// add counts one finished object of size bytes and reports progress.
func (t *tracker) add(kind int, size int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch kind {
	case kindUploaded:
		t.st.Uploaded++
	case kindCopied:
		t.st.Copied++
		t.st.BytesCopied += size
	case kindSkipped:
		t.st.Skipped++
		t.st.BytesSkipped += size
	}
	t.done += size
	if t.progress != nil {
		t.progress(Progress{Snapshot: t.st.SnapshotID, FilesDone: t.st.Uploaded + t.st.Copied + t.st.Skipped,
			Files: t.st.Files, BytesDone: t.done, Bytes: t.bytes})
	}
}

func (t *tracker) stats() UploadStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
