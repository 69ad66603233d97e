// Package remote keeps copies of a source's published snapshots on object
// storage (a storage.Store: an S3 bucket or another folder) and brings them
// back. The local backup folder stays where snapshots are built and read;
// the store is where they survive the machine.
//
// Remote layout, names in the store (under its prefix):
//
//	<source>/objects/<sha256[:2]>/<sha256>            every file of every snapshot, once by its content
//	<source>/snapshots/<id>/manifest.json              the local manifest's exact bytes, put last: path -> size, sha256
//	<source>/snapshots/<id>/<schema>/<table>.parquet   a snapshot uploaded before content objects: its files
//	<source>/current                                   pointer "snapshots/<id>", as the local link
//	<source>/publisher                                 pointer "<host>\t<session token>": the worker that published last
//
// Upload puts (or finds) the content object of every file of a snapshot,
// confirms each one with Stat, then puts manifest.json, then moves current.
// A remote manifest therefore vouches for every file it lists: it is the
// mark of a complete remote snapshot, and a reader follows it (objects.go:
// the content object, else the old name under the snapshot). A file
// another snapshot on the store holds is found by its content, so a refresh
// sends its new files only and copies nothing. A snapshot's upload deletes
// nothing that a published snapshot refers to; what is deleted is
// retention's choice (DeleteSnapshot, then SweepObjects: the objects no
// manifest refers to, past a grace period; refused per object by Object
// Lock) and the spread refresh's scratch: its parts once the snapshot is
// confirmed, a failed run's unpublished objects (DiscardUnpublished) and
// parts whose owner run no longer runs (SweepParts).
//
//	<source>/parts/<id>/<activity id>-<attempt>/...    a shared table's files, never at a final name
//	<source>/parts/<id>.owner                          the Refresh run that owns the parts of <id>
//
// Confirmation is recorded locally in <source dir>/.remote/<id>.ok (written
// crash-safely after the manifest and the pointer are up): the store's
// location and the sha256 of the manifest confirmed. Local retention keeps
// every snapshot without a valid marker (Confirmed). Download assembles a
// remote snapshot in <source dir>/.download/<id>/, checking every file's
// sha256 as it writes it, and installs it under snapshots/<id>.
package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// DefaultParallel is how many objects a Mirror transfers at once.
const DefaultParallel = 4

// maxManifestSize bounds a remote manifest read into memory.
const maxManifestSize = 256 << 20

// Mirror copies the snapshots of one source between its local folder and a
// store. Its fields are set before use and not changed after; its methods
// are safe for concurrent use (two uploads of the same snapshot do the same
// idempotent writes).
type Mirror struct {
	Store  storage.Store
	Source string // the source's name: the first element of every remote name
	Dir    string // the local source folder, <backup dir>/<source>
	// Parallel bounds the objects transferred at once (0: DefaultParallel).
	Parallel int
	Log      *slog.Logger
	// Grace is the grace period of content objects (0:
	// retention.ObjectGrace); Now the clock it is measured with (nil:
	// time.Now). Tests set them.
	Grace time.Duration
	Now   func() time.Time
}

// New returns the Mirror of source between the local folder dir and store.
func New(store storage.Store, source, dir string, log *slog.Logger) (*Mirror, error) {
	if store == nil {
		return nil, errors.New("remote: no store")
	}
	if err := storage.CheckName(source); err != nil || strings.Contains(source, "/") {
		return nil, fmt.Errorf("remote: bad source name %q", source)
	}
	if log == nil {
		log = slog.Default()
	}
	return &Mirror{Store: store, Source: source, Dir: dir, Log: log}, nil
}

// Progress is how far a transfer of one snapshot is: objects and bytes done
// (sent, copied, found already there) of the total, manifest included.
type Progress struct {
	Snapshot  string
	FilesDone int
	Files     int
	BytesDone int64
	Bytes     int64
}

// SnapshotName is the remote name of file rel of snapshot id.
func (m *Mirror) SnapshotName(id, rel string) string {
	return path.Join(m.Source, snapshot.SnapshotsDir, id, rel)
}

// snapshotPrefix is the prefix of every object of snapshot id on the store.
func (m *Mirror) snapshotPrefix(id string) string { return m.SnapshotName(id, "") + "/" }

// names lists the names of the objects under prefix.
func (m *Mirror) names(ctx context.Context, prefix string) ([]string, error) {
	var names []string
	err := m.Store.List(ctx, prefix, func(info storage.Info) error {
		names = append(names, info.Name)
		return nil
	})
	return names, err
}

// CurrentName is the remote name of the current pointer.
func (m *Mirror) CurrentName() string { return path.Join(m.Source, snapshot.CurrentLink) }

// pointerValue is the value of a current pointer naming id.
func pointerValue(id string) string { return snapshot.SnapshotsDir + "/" + id }

// parsePointer returns the snapshot id a current pointer's value names.
func parsePointer(v string) (string, error) {
	id, ok := strings.CutPrefix(v, snapshot.SnapshotsDir+"/")
	if !ok {
		return "", fmt.Errorf("remote current holds %q, not %s/<id>", v, snapshot.SnapshotsDir)
	}
	if _, err := snapshot.ParseSnapshotID(id); err != nil {
		return "", fmt.Errorf("remote current: %w", err)
	}
	return id, nil
}

// Current returns the id the remote current pointer names, "" when there is
// no pointer yet.
func (m *Mirror) Current(ctx context.Context) (string, error) {
	v, err := m.readPointer(ctx, m.CurrentName())
	if err != nil || v == "" {
		return "", err
	}
	return parsePointer(v)
}

// readPointer returns the value of the pointer name, "" when it does not
// exist yet (a pointer's value is never empty).
func (m *Mirror) readPointer(ctx context.Context, name string) (string, error) {
	v, err := m.Store.ReadPointer(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return v, err
}

// ReadManifest reads and checks the remote manifest of snapshot id and
// returns it with its exact bytes. A snapshot without a remote manifest (not
// uploaded, or not completely) is an error wrapping fs.ErrNotExist.
func (m *Mirror) ReadManifest(ctx context.Context, id string) (snapshot.Manifest, []byte, error) {
	if _, err := snapshot.ParseSnapshotID(id); err != nil {
		return snapshot.Manifest{}, nil, err
	}
	rc, err := m.Store.Open(ctx, m.SnapshotName(id, snapshot.ManifestName))
	if err != nil {
		return snapshot.Manifest{}, nil, fmt.Errorf("read remote manifest of %s: %w", id, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxManifestSize+1))
	if err == nil && len(b) > maxManifestSize {
		err = fmt.Errorf("larger than %d bytes", maxManifestSize)
	}
	if err != nil {
		return snapshot.Manifest{}, nil, fmt.Errorf("read remote manifest of %s: %w", id, err)
	}
	man, err := snapshot.ParseManifest(b)
	if err == nil && man.SnapshotID != id {
		err = fmt.Errorf("it is the manifest of %s", man.SnapshotID)
	}
	if err == nil && man.Source != "" && man.Source != m.Source {
		err = fmt.Errorf("it is a manifest of source %s", man.Source)
	}
	if err != nil {
		return snapshot.Manifest{}, nil, fmt.Errorf("remote manifest of %s: %w", id, err)
	}
	return man, b, nil
}

// List returns the ids of the snapshots that have a remote manifest, oldest
// first. It lists every object under <source>/snapshots/.
func (m *Mirror) List(ctx context.Context) ([]string, error) {
	prefix := path.Join(m.Source, snapshot.SnapshotsDir) + "/"
	var ids []string
	err := m.Store.List(ctx, prefix, func(info storage.Info) error {
		rest := strings.TrimPrefix(info.Name, prefix)
		id, file, ok := strings.Cut(rest, "/")
		if ok && file == snapshot.ManifestName {
			if _, err := snapshot.ParseSnapshotID(id); err == nil {
				ids = append(ids, id)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list remote snapshots of %s: %w", m.Source, err)
	}
	return ids, nil
}

// ErrConflict is matched (errors.Is) by the error of an upload whose
// snapshot id already holds another snapshot on the store (a manifest with
// other bytes): nothing is written over it.
var ErrConflict = errors.New("the store holds another snapshot with this id")

// errFound stops a listing at its first object.
var errFound = errors.New("found")

// Taken reports whether the store holds any object under snapshot id's
// name (its manifest, or files of an upload from before content objects): a
// new snapshot must not get that id. AllocateSnapshot asks, so that a
// source folder that was lost never reuses an id the store has. An
// unfinished upload puts only content objects, named by content, so it
// does not take its id: reusing it is harmless (nothing else bears it).
func (m *Mirror) Taken(ctx context.Context, id string) (bool, error) {
	err := m.Store.List(ctx, m.snapshotPrefix(id), func(storage.Info) error { return errFound })
	if errors.Is(err, errFound) {
		return true, nil
	}
	return false, err
}

// marker is the content of <source dir>/.remote/<id>.ok.
type marker struct {
	Location       string `json:"location"`
	ManifestSHA256 string `json:"manifest_sha256"`
}

func (m *Mirror) markerPath(id string) string {
	return snapshot.Folder(m.Dir).Remote(id + ".ok")
}

// localManifest reads the manifest bytes of the local snapshot id.
func (m *Mirror) localManifest(id string) ([]byte, error) {
	return os.ReadFile(filepath.Join(snapshot.Folder(m.Dir).Snapshot(id), snapshot.ManifestName))
}

// Confirmed reports whether the local snapshot id has a valid confirmation
// marker: written for this store's location and for the manifest the local
// snapshot has now. A missing snapshot or marker is false, not an error.
func (m *Mirror) Confirmed(id string) (bool, error) {
	b, err := os.ReadFile(m.markerPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var mk marker
	if err := json.Unmarshal(b, &mk); err != nil {
		m.Log.Warn("confirmation marker unreadable; the snapshot counts as not uploaded",
			"snapshot", id, "file", m.markerPath(id), "error", err)
		return false, nil
	}
	mb, err := m.localManifest(id)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return mk.Location == m.Store.Location() && mk.ManifestSHA256 == sha256Hex(mb), nil
}

// confirm writes the marker of id for the manifest bytes mb, crash-safely.
func (m *Mirror) confirm(id string, mb []byte) error {
	dir := snapshot.Folder(m.Dir).Remote()
	if err := os.MkdirAll(dir, filemode.Dir()); err != nil {
		return err
	}
	b, err := json.Marshal(marker{Location: m.Store.Location(), ManifestSHA256: sha256Hex(mb)})
	if err != nil {
		return err
	}
	return atomicfile.Write(m.markerPath(id), filemode.File(), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// Forget removes the marker of id (after local retention removed the
// snapshot). A missing marker is success.
func (m *Mirror) Forget(id string) error {
	if _, err := snapshot.ParseSnapshotID(id); err != nil {
		return err
	}
	if err := os.Remove(m.markerPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Pending returns the ids of the published local snapshots not confirmed
// remotely, oldest first, up to and including upTo ("" : all).
func (m *Mirror) Pending(upTo string) ([]string, error) {
	ids, err := snapshot.ListSnapshots(m.Dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range ids {
		if upTo != "" && id > upTo {
			break
		}
		ok, err := m.Confirmed(id)
		if err != nil {
			return nil, err
		}
		if !ok {
			out = append(out, id)
		}
	}
	return out, nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func (m *Mirror) parallel() int {
	if m.Parallel > 0 {
		return m.Parallel
	}
	return DefaultParallel
}
