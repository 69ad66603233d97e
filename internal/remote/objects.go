package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/retention"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
)

// Content objects. Every file of a snapshot uploaded by this version is
// stored once by its content, at <source>/objects/<sha256[:2]>/<sha256>
// (ObjectName), and its remote manifest (the local manifest's bytes,
// listing each file's path, size and sha256) is what refers to it: two
// snapshots holding the same file share one object, so the store grows with
// the changes only. A snapshot uploaded before (files under
// snapshots/<id>/<rel>) is still read: a reader opens the content object
// first and, where there is none, the file's name under the snapshot
// (openFile); its next snapshot's upload copies such a file once into its
// content object (the lazy migration) and the old names go with the old
// snapshot by retention.
//
// An object is written only by a Put with its digest (the store checks the
// content against it) or a Copy of an object that was, so its name is its
// sha256: a Stat giving the right size (and, where the store records it,
// the sha256) vouches for it, without reading it back.
//
// Objects are removed only by SweepObjects, by retention's rule
// (retention.Unreferenced): no remote manifest refers to it and it is
// older than the grace period. An upload puts its objects before its
// manifest, so it relies on an object that is already there only when the
// previous snapshot's manifest refers to it (and that manifest is still on
// the store once the new manifest is up: Upload checks) or when it is
// younger than half the grace period; an older one it touches
// (storage.Store.Touch) first.

// ObjectsDir is the folder, under a source's folder on the store, of the
// content objects.
const ObjectsDir = "objects"

// ObjectName is the remote name of the content object of digest d.
func (m *Mirror) ObjectName(d digest.Digest) (string, error) {
	if !digest.ValidSHA256(d.SHA256) {
		return "", fmt.Errorf("bad sha256 %q in a manifest", d.SHA256)
	}
	return path.Join(m.Source, ObjectsDir, d.SHA256[:2], d.SHA256), nil
}

// objectsPrefix is the prefix of every content object of the source.
func (m *Mirror) objectsPrefix() string { return path.Join(m.Source, ObjectsDir) + "/" }

// grace is the grace period of content objects.
func (m *Mirror) grace() time.Duration {
	if m.Grace > 0 {
		return m.Grace
	}
	return retention.ObjectGrace
}

// now is the time the grace period is measured at.
func (m *Mirror) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// statObject stats the content object name of d: there when it has d's
// size and, where the store records one, d's sha256.
func (m *Mirror) statObject(ctx context.Context, name string, d digest.Digest) (storage.Info, bool, error) {
	info, err := m.Store.Stat(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return info, false, nil
	}
	if err != nil {
		return info, false, err
	}
	return info, info.Size == d.Size && (info.SHA256 == "" || info.SHA256 == d.SHA256), nil
}

// young reports whether an upload may rely on an object modified at
// modified without touching it: younger than half the grace period.
func (m *Mirror) young(modified time.Time) bool {
	return !modified.IsZero() && m.now().Sub(modified) < m.grace()/2
}

// fileNames are the names a reader tries for file rel of snapshot id with
// digest d, in order: its content object, then its name under the
// snapshot (a snapshot uploaded before content objects).
func (m *Mirror) fileNames(id, rel string, d digest.Digest) ([]string, error) {
	obj, err := m.ObjectName(d)
	if err != nil {
		return nil, fmt.Errorf("%s of snapshot %s: %w", rel, id, err)
	}
	return []string{obj, m.SnapshotName(id, rel)}, nil
}

// openFirst opens the first of names that exists; when none does, the
// error names the first and wraps fs.ErrNotExist.
func (m *Mirror) openFirst(ctx context.Context, names []string) (io.ReadCloser, error) {
	var first error
	for _, name := range names {
		rc, err := m.Store.Open(ctx, name)
		if err == nil {
			return rc, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// Swept objects: what SweepObjects did.
type SweptObjects struct {
	// Referenced is how many objects a remote manifest refers to (kept).
	Referenced int
	// Young is how many unreferenced objects the grace period keeps.
	Young   int
	Deleted []string
	// Refused are the deletes that failed, by name: Object Lock
	// (storage.ErrLocked) or another error.
	Refused map[string]error
}

// SweepObjects deletes the content objects no remote manifest refers to
// and that are older than the grace period (retention.Unreferenced). It
// reads every remote manifest first, then lists the objects, so a
// manifest put meanwhile can only be one whose objects are young or
// referred to by a manifest read (see Upload). A delete that fails is
// recorded in Refused and the sweep goes on; an error of the listing or of
// a manifest's read stops it before it deletes anything.
func (m *Mirror) SweepObjects(ctx context.Context) (SweptObjects, error) {
	out := SweptObjects{Refused: map[string]error{}}
	refs, err := m.references(ctx)
	if err != nil {
		return out, err
	}
	var objs []retention.Object
	prefix := m.objectsPrefix()
	err = m.Store.List(ctx, prefix, func(info storage.Info) error {
		sum := path.Base(info.Name)
		if !digest.ValidSHA256(sum) || strings.TrimPrefix(info.Name, prefix) != sum[:2]+"/"+sum {
			return nil // not a content object: not ours to judge
		}
		if refs[sum] {
			out.Referenced++
		}
		objs = append(objs, retention.Object{Name: info.Name, SHA256: sum, Modified: info.ModTime})
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("list content objects of %s on %s: %w", m.Source, m.Store.Location(), err)
	}
	gone := retention.Unreferenced(objs, refs, m.now(), m.grace())
	out.Young = len(objs) - out.Referenced - len(gone)
	for _, o := range gone {
		if err := m.Store.Delete(ctx, o.Name); err != nil {
			out.Refused[o.Name] = err
			continue
		}
		out.Deleted = append(out.Deleted, o.Name)
	}
	m.Log.Info("content objects swept", "source", m.Source, "location", m.Store.Location(), "referenced", out.Referenced,
		"young", out.Young, "deleted", len(out.Deleted), "refused", len(out.Refused))
	return out, nil
}

// references is the set of sha256 every remote manifest of the source
// lists.
func (m *Mirror) references(ctx context.Context) (map[string]bool, error) {
	ids, err := m.List(ctx)
	if err != nil {
		return nil, err
	}
	refs := map[string]bool{}
	for _, id := range ids {
		man, _, err := m.ReadManifest(ctx, id)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the listing: it refers to nothing
		}
		if err != nil {
			return nil, fmt.Errorf("references of the content objects: %w", err)
		}
		for _, d := range man.Files {
			refs[d.SHA256] = true
		}
	}
	return refs, nil
}

// manifestThere reports whether the remote manifest of id is on the store.
func (m *Mirror) manifestThere(ctx context.Context, id string) (bool, error) {
	_, err := m.Store.Stat(ctx, m.SnapshotName(id, snapshot.ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
