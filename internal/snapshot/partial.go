package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// A partial snapshot holds some tables of a source, dumped at their own
// consistent position (a partial full backup): the tables a refresh cannot
// fold across a schema change. It lives in <source>/.partial/<id>/, with a
// manifest of kind SnapshotPartial, so that nothing that lists the
// source's snapshots (ListSnapshots and all its readers: moments,
// retention, uploads, views, status, the API) ever sees it; it is never
// current and never uploaded. A reader that knows its id opens it
// (OpenPartial, moment.LocalCatalog.Open). RemovePartial removes it;
// retention removes those older than PartialMaxAge.

// ErrNotPartial is RemovePartial's refusal of what is not a partial
// snapshot.
var ErrNotPartial = errors.New("not a partial snapshot")

// PartialMaxAge is the age (by its id) past which retention removes a
// partial snapshot that nothing removed: the refresh that asked for it
// removes it when done, so one this old was left by a run that failed.
const PartialMaxAge = 24 * time.Hour

// FinishPartial seals the staging folder as partial snapshot m (Kind must
// be SnapshotPartial): the manifest is completed and checked as Publish
// does, written last, and the folder renamed to .partial/<id>; current is
// not touched. Finishing an id already finished with the same manifest (a
// retry) succeeds; with a different manifest it is an error.
func (b *Builder) FinishPartial(m Manifest) error {
	if err := b.finishPartial(m); err != nil {
		return fmt.Errorf("finish partial snapshot %s: %w", b.id, err)
	}
	return nil
}

func (b *Builder) finishPartial(m Manifest) error {
	if m.Kind != SnapshotPartial {
		return fmt.Errorf("manifest kind %q is not %q", m.Kind, SnapshotPartial)
	}
	enc, err := b.seal(&m)
	if err != nil {
		return err
	}
	final := Folder(b.sourceDir).Partial(b.id)
	old, err := os.ReadFile(filepath.Join(final, ManifestName))
	switch {
	case err == nil && bytes.Equal(old, enc):
		return os.RemoveAll(b.dir)
	case err == nil:
		return errors.New("already finished with a different manifest")
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if _, err := os.Lstat(final); err == nil {
		return fmt.Errorf("%s exists without a manifest", final)
	}
	return b.install(final, enc)
}

// OpenPartial opens the partial snapshot id of sourceDir; one that does not
// exist is an error wrapping fs.ErrNotExist.
func OpenPartial(sourceDir, id string) (*Snapshot, error) {
	if _, err := ParseSnapshotID(id); err != nil {
		return nil, err
	}
	s, err := OpenSnapshot(Folder(sourceDir).Partial(id))
	if err != nil {
		return nil, err
	}
	if s.Manifest.Kind != SnapshotPartial {
		return nil, fmt.Errorf("open partial snapshot %s: manifest kind %q is not %q", id, s.Manifest.Kind, SnapshotPartial)
	}
	return s, nil
}

// RemovePartial removes the partial snapshot id of sourceDir crash-safely
// (renamed to .trash/<id>, then deleted, as RemoveSnapshot). One already
// gone is success. It refuses anything else: an id that is not one, a
// folder under .partial/ whose manifest is missing or is not of kind
// SnapshotPartial; a published snapshot is never looked at.
func RemovePartial(sourceDir, id string) error {
	if _, err := ParseSnapshotID(id); err != nil {
		return fmt.Errorf("remove partial snapshot: %w: %v", ErrNotPartial, err)
	}
	dir := Folder(sourceDir).Partial(id)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("remove partial snapshot %s: %w", id, err)
	}
	if _, err := OpenPartial(sourceDir, id); err != nil {
		return fmt.Errorf("remove partial snapshot %s: refused, %w: %v", id, ErrNotPartial, err)
	}
	if err := moveToTrash(sourceDir, Folder(sourceDir).Partial(), id); err != nil {
		return fmt.Errorf("remove partial snapshot %s: %w", id, err)
	}
	if err := os.RemoveAll(Folder(sourceDir).Trash(id)); err != nil {
		return fmt.Errorf("remove partial snapshot %s: %w", id, err)
	}
	return nil
}

// ListPartials returns the ids of the partial snapshots of sourceDir (those
// with a manifest), oldest first.
func ListPartials(sourceDir string) ([]string, error) {
	ents, err := os.ReadDir(Folder(sourceDir).Partial())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list partial snapshots: %w", err)
	}
	var ids []string
	for _, e := range ents {
		if _, err := ParseSnapshotID(e.Name()); err != nil || !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(Folder(sourceDir).Partial(e.Name()), ManifestName)); err == nil {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// RemoveStalePartials removes the partial snapshots of sourceDir whose id
// is older than maxAge at now (RemovePartial) and returns their ids; it
// stops at the first that cannot be removed.
func RemoveStalePartials(sourceDir string, now time.Time, maxAge time.Duration) ([]string, error) {
	ids, err := ListPartials(sourceDir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, id := range ids {
		made, err := ParseSnapshotID(id)
		if err != nil || now.Sub(made) <= maxAge {
			continue
		}
		if err := RemovePartial(sourceDir, id); err != nil {
			return removed, err
		}
		removed = append(removed, id)
	}
	return removed, nil
}
