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
	"slices"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// UploadStats is what the upload of one snapshot did. Files counts the
// snapshot's files with its manifest; each was sent (Uploaded), copied
// inside the store (Copied: from a shared table's part, or from the
// previous snapshot's name for it when that snapshot was uploaded before
// content objects), or found already there with its digest (Skipped: a
// content object another snapshot or an earlier attempt put).
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
//  1. every file the manifest lists goes to its content object
//     <source>/objects/<sha256[:2]>/<sha256> (uploadFile): one Stat finds
//     it there (a file unchanged since a snapshot on the store costs that
//     alone: no copy, no read-back), else it is copied from the previous
//     snapshot's own name for it (a snapshot uploaded before content
//     objects) or from a shared table's part, else sent from the local
//     file, the store checking its digest, and confirmed by a Stat (size,
//     and sha256 where the store records it);
//  2. manifest.json (the local bytes) goes up last, and is confirmed; then
//     the previous snapshot's manifest, whose references the upload relied
//     on, is checked to be still there (if retention removed it meanwhile,
//     those objects are stated again and a missing one is sent);
//  3. the current pointer moves to this snapshot (advance), unless it
//     already names a newer one;
//  4. the local marker .remote/<id>.ok is written;
//  5. the parts a spread refresh put for id under <source>/parts/<id>/
//     are deleted (dropParts: a part it cannot delete, Object Lock or
//     another error, is logged and stays), their owner record left for
//     SweepParts.
//
// Files of equal content are one object, put (or found) once; the others
// count as skipped. progress, when not nil, is called after each object. A
// local file whose
// content differs from the manifest fails the upload with a
// *storage.DigestError and nothing is stored under its name. The parts of
// id are the only objects an upload deletes.
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
	bySHA := make(map[string]string, len(prev))
	for rel, d := range prev {
		bySHA[d.SHA256] = rel
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
	seen := map[string]bool{}
	var dups []string // files whose content an earlier file of the list has: one object
	for _, rel := range rels {
		sum := man.Files[rel].SHA256
		if seen[sum] {
			dups = append(dups, rel)
			continue
		}
		seen[sum] = true
		g.Go(func() error { return m.uploadFile(gctx, man, rel, bySHA, parts[rel], t) })
	}
	if err := g.Wait(); err != nil {
		return t.stats(), err
	}
	for _, rel := range dups {
		t.add(kindSkipped, man.Files[rel].Size)
	}
	md := digest.Digest{SHA256: sha256Hex(mb), Size: int64(len(mb))}
	if err := m.send(ctx, m.SnapshotName(id, snapshot.ManifestName), md, t,
		func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(mb)), nil }); err != nil {
		return t.stats(), err
	}
	if relied := t.reliedOn(); len(relied) > 0 {
		there, err := m.manifestThere(ctx, man.Prev)
		if err == nil && !there {
			err = m.recheck(ctx, man, relied, t)
		}
		if err != nil {
			return t.stats(), err
		}
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
// backup) or its remote manifest does not exist (never uploaded, or
// removed). Its files are what the upload relies on without a Touch and
// copies from their old names.
func (m *Mirror) remotePrev(ctx context.Context, prev string) (map[string]digest.Digest, error) {
	if prev == "" {
		return nil, nil
	}
	man, _, err := m.ReadManifest(ctx, prev)
	if errors.Is(err, fs.ErrNotExist) {
		m.Log.Warn("previous snapshot is not on the store: files are found by their content or sent", "snapshot", prev,
			"location", m.Store.Location())
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return man.Files, nil
}

// uploadFile makes the content object of file rel hold it: one Stat when
// it is already there (touched first when it is old and the previous
// snapshot does not refer to it), else copied from the previous snapshot's
// own name for it (a snapshot uploaded before content objects: the lazy
// migration) or from a shared table's part (parts: its objects) with the
// file's digest, else sent from the local file. prev maps the sha256 of
// each file of the previous remote manifest to its path there.
func (m *Mirror) uploadFile(ctx context.Context, man snapshot.Manifest, rel string, prev map[string]string, parts []string,
	t *tracker) error {
	d := digest.Digest(man.Files[rel])
	name, err := m.ObjectName(d)
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	info, there, err := m.statObject(ctx, name, d)
	if err != nil {
		return err
	}
	prevRel, vouched := prev[d.SHA256]
	if there && !vouched && !m.young(info.ModTime) {
		err := m.Store.Touch(ctx, name)
		if errors.Is(err, fs.ErrNotExist) {
			there = false // swept meanwhile: put again below
		} else if err != nil {
			return err
		}
	}
	if there {
		if vouched {
			t.rely(rel)
		}
		t.add(kindSkipped, d.Size)
		return nil
	}
	if vouched {
		old := m.SnapshotName(man.Prev, prevRel)
		err := m.Store.Copy(ctx, old, name)
		if err == nil {
			return m.checkObject(ctx, name, d, t, kindCopied)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		m.Log.Warn("previous snapshot's file is on the store neither as a content object nor under its name; sending it",
			"object", name, "old_name", old)
	}
	if done, err := m.copyPart(ctx, name, d, parts, t); done || err != nil {
		return err
	}
	local := filepath.Join(snapshot.Folder(m.Dir).Snapshot(man.SnapshotID), filepath.FromSlash(rel))
	return m.put(ctx, name, d, t, func() (io.ReadCloser, error) { return os.Open(local) }, m.checkObject)
}

// recheck follows an upload whose previous snapshot's manifest went away
// before the new manifest was up (retention removed it): the content
// objects the upload found there because that manifest referred to them
// (relied) are stated again, and a missing one is sent from the local
// file.
func (m *Mirror) recheck(ctx context.Context, man snapshot.Manifest, relied []string, t *tracker) error {
	m.Log.Warn("previous snapshot removed during the upload; checking the objects it shared", "snapshot", man.SnapshotID,
		"prev", man.Prev, "objects", len(relied))
	for _, rel := range relied {
		d := digest.Digest(man.Files[rel])
		name, err := m.ObjectName(d)
		if err != nil {
			return err
		}
		_, there, err := m.statObject(ctx, name, d)
		if err != nil || there {
			if err != nil {
				return err
			}
			continue
		}
		local := filepath.Join(snapshot.Folder(m.Dir).Snapshot(man.SnapshotID), filepath.FromSlash(rel))
		if err := m.put(ctx, name, d, t, func() (io.ReadCloser, error) { return os.Open(local) }, m.checkObject); err != nil {
			return err
		}
	}
	return nil
}

// send puts the content open yields under name unless name already holds
// d, then confirms it (holds: read back where the store keeps no sha256).
func (m *Mirror) send(ctx context.Context, name string, d digest.Digest, t *tracker, open func() (io.ReadCloser, error)) error {
	there, err := m.holds(ctx, name, d)
	if err != nil {
		return err
	}
	if there {
		t.add(kindSkipped, d.Size)
		return nil
	}
	return m.put(ctx, name, d, t, open, m.check)
}

// put puts the content open yields under name, then confirms it with
// check.
func (m *Mirror) put(ctx context.Context, name string, d digest.Digest, t *tracker, open func() (io.ReadCloser, error),
	check func(context.Context, string, digest.Digest, *tracker, int) error) error {
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
	return check(ctx, name, d, t, kindUploaded)
}

// checkObject confirms that the content object name holds d after a
// write, by its Stat alone (see statObject), and counts it as kind.
func (m *Mirror) checkObject(ctx context.Context, name string, d digest.Digest, t *tracker, kind int) error {
	return confirmed(name, d, t, kind, func() (bool, error) {
		_, ok, err := m.statObject(ctx, name, d)
		return ok, err
	})
}

// check confirms that name holds d after a write (holds) and counts it as
// kind.
func (m *Mirror) check(ctx context.Context, name string, d digest.Digest, t *tracker, kind int) error {
	return confirmed(name, d, t, kind, func() (bool, error) { return m.holds(ctx, name, d) })
}

// confirmed counts name as kind when has says it holds d, and is an error
// naming it otherwise.
func confirmed(name string, d digest.Digest, t *tracker, kind int, has func() (bool, error)) error {
	ok, err := has()
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
	relied   []string // files found as content objects the previous manifest refers to
}

// rely records that file rel was found as a content object the previous
// snapshot's manifest refers to.
func (t *tracker) rely(rel string) {
	t.mu.Lock()
	t.relied = append(t.relied, rel)
	t.mu.Unlock()
}

func (t *tracker) reliedOn() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.relied)
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
