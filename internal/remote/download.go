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

	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// DownloadStats is what the download of one snapshot did: Files objects
// (manifest included), of which Downloaded were fetched and Kept were
// already in the download folder from an earlier attempt, with their
// sha256 checked again.
type DownloadStats struct {
	SnapshotID      string
	Files           int
	Downloaded      int
	Kept            int
	BytesDownloaded int64
	BytesKept       int64
	// Local: the snapshot was already published locally with the same
	// manifest; nothing was fetched.
	Local bool
}

// Download fetches the remote snapshot id into the local source folder and
// publishes it there under snapshots/<id> (snapshot.Install), without
// touching the local current link:
//
//  1. the remote manifest is read and checked (its id, its source);
//  2. every file it lists is fetched (its content object, or its name
//     under the snapshot for one uploaded before content objects) into
//     .download/<id>/<rel> crash-safely,
//     hashed as it is written: a file whose size or sha256 differs from the
//     manifest is not kept, and the download fails with a
//     *snapshot.DigestError; a file an earlier attempt left there is kept
//     when its sha256 matches;
//  3. manifest.json (the remote bytes) is written last, the folder renamed
//     into snapshots/, and the confirmation marker written: the snapshot is
//     on the store by definition.
//
// Every file of the snapshot is fetched, the table files with their whole
// chains, so later refreshes pair on it as on a snapshot published here.
// progress, when not nil, is called after each file.
func (m *Mirror) Download(ctx context.Context, id string, progress func(Progress)) (DownloadStats, error) {
	st, err := m.download(ctx, id, progress)
	if err != nil {
		return st, fmt.Errorf("download snapshot %s from %s: %w", id, m.Store.Location(), err)
	}
	return st, nil
}

// DownloadNeed is about the bytes Download of snapshot id writes into the
// local folder: the remote manifest and every file it lists (their sizes
// in it), less what an earlier attempt left in the download folder.
func (m *Mirror) DownloadNeed(ctx context.Context, id string) (uint64, error) {
	man, mb, err := m.ReadManifest(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", m.Store.Location(), err)
	}
	need := uint64(len(mb))
	for _, d := range man.Files {
		need += uint64(max(d.Size, 0))
	}
	return need - min(need, treeBytes(snapshot.DownloadPath(m.Dir, id))), nil
}

// treeBytes is the size of the regular files under dir (0 when it does
// not exist; unreadable entries count as 0).
func treeBytes(dir string) uint64 {
	var n uint64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += uint64(fi.Size())
			}
		}
		return nil
	})
	return n
}

func (m *Mirror) download(ctx context.Context, id string, progress func(Progress)) (DownloadStats, error) {
	man, mb, err := m.ReadManifest(ctx, id)
	if err != nil {
		return DownloadStats{}, err
	}
	st := DownloadStats{SnapshotID: id, Files: len(man.Files) + 1}
	if local, err := m.localManifest(id); err == nil && bytes.Equal(local, mb) {
		st.Local = true
		return st, m.confirm(id, mb)
	}
	dir := snapshot.DownloadPath(m.Dir, id)
	if err := os.MkdirAll(dir, filemode.Dir()); err != nil {
		return st, err
	}
	total := int64(len(mb))
	rels := make([]string, 0, len(man.Files))
	for rel, d := range man.Files {
		rels = append(rels, rel)
		total += d.Size
	}
	sort.Strings(rels)
	var mu sync.Mutex
	var done int64
	report := func(kept bool, size int64) {
		mu.Lock()
		defer mu.Unlock()
		if kept {
			st.Kept++
			st.BytesKept += size
		} else {
			st.Downloaded++
			st.BytesDownloaded += size
		}
		done += size
		if progress != nil {
			progress(Progress{Snapshot: id, FilesDone: st.Kept + st.Downloaded, Files: st.Files, BytesDone: done, Bytes: total})
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(m.parallel())
	for _, rel := range rels {
		g.Go(func() error {
			d := man.Files[rel]
			names, err := m.fileNames(id, rel, d)
			if err != nil {
				return err
			}
			kept, err := m.fetch(gctx, names, filepath.Join(dir, filepath.FromSlash(rel)), rel, d)
			if err != nil {
				return err
			}
			report(kept, d.Size)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return st, err
	}
	err = atomicfile.Write(filepath.Join(dir, snapshot.ManifestName), filemode.File(), func(w io.Writer) error {
		_, err := w.Write(mb)
		return err
	})
	if err != nil {
		return st, err
	}
	report(false, int64(len(mb)))
	if err := snapshot.Install(m.Dir, id); err != nil {
		return st, err
	}
	if err := m.confirm(id, mb); err != nil {
		return st, err
	}
	m.Log.Info("snapshot downloaded", "snapshot", id, "location", m.Store.Location(), "files", st.Files,
		"downloaded", st.Downloaded, "kept", st.Kept, "bytes_downloaded", st.BytesDownloaded)
	return st, nil
}

// fetch writes the first of the objects names that exists to the local
// file p, checking digest d as it writes; a file already at p with digest d
// is kept (true).
func (m *Mirror) fetch(ctx context.Context, names []string, p, rel string, d digest.Digest) (bool, error) {
	if fi, err := os.Stat(p); err == nil && fi.Size() == d.Size {
		if got, err := digest.File(p); err != nil {
			return false, err
		} else if got == d {
			return true, nil
		}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(p), filemode.Dir()); err != nil {
		return false, err
	}
	rc, err := m.openFirst(ctx, names)
	if err != nil {
		return false, err
	}
	defer rc.Close()
	err = atomicfile.Write(p, filemode.File(), func(w io.Writer) error {
		h := digest.NewHasher()
		if _, err := io.Copy(io.MultiWriter(w, h), rc); err != nil {
			return err
		}
		if got := h.Digest(); got != d {
			return &snapshot.DigestError{File: rel, WantSize: d.Size, GotSize: got.Size, WantSHA256: d.SHA256, GotSHA256: got.SHA256}
		}
		return nil
	})
	return false, err
}
