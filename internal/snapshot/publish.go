package snapshot

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/filemode"
)

// crashPoint is called between the steps of Publish with the name of the
// step just completed; a non-nil error stops Publish right there, leaving
// the folder as a crash at that moment would. Tests replace it.
var crashPoint = func(step string) error { return nil }

// Publish makes the snapshot visible, all or nothing (the Litestream way):
//
//  1. check the manifest: SnapshotID must be the builder's (empty: filled
//     in), Version 0 becomes ManifestVersion, a zero CreatedAt becomes the
//     id's time; Files becomes the digests of the files written or linked
//     (entries the caller gave must agree), and every table's file and chain
//     entries must be among them;
//  2. fsync every file and folder of the staging folder;
//  3. write manifest.json last: a temporary file, fsync, rename, fsync;
//  4. rename the staging folder to snapshots/<id>, fsync snapshots/;
//  5. swap current: a temporary symlink to snapshots/<id> renamed over
//     current, fsync the source folder.
//
// A crash before step 4 leaves only a staging folder, which readers never
// look at and NewBuilder removes; current always names a complete snapshot.
// Publishing an id that is already published with the same manifest (a rerun
// after a crash between steps 4 and 5, or after success) is a no-op success
// that finishes the swap of current if current does not already name a
// snapshot at a newer position; with a different manifest it is an error.
func (b *Builder) Publish(m Manifest) error {
	if err := b.publish(m); err != nil {
		return fmt.Errorf("publish snapshot %s: %w", b.id, err)
	}
	return nil
}

func (b *Builder) publish(m Manifest) error {
	if m.Kind == SnapshotPartial {
		return fmt.Errorf("a %s snapshot is never made current (FinishPartial)", SnapshotPartial)
	}
	enc, err := b.seal(&m)
	if err != nil {
		return err
	}
	final := Folder(b.sourceDir).Snapshot(b.id)
	if done, err := b.republish(final, enc, m.Position); done || err != nil {
		return err
	}
	if err := b.install(final, enc); err != nil {
		return err
	}
	return swapCurrent(b.sourceDir, b.id)
}

// seal completes m (step 1 of Publish) and returns its encoding.
func (b *Builder) seal(m *Manifest) ([]byte, error) {
	if m.SnapshotID == "" {
		m.SnapshotID = b.id
	} else if m.SnapshotID != b.id {
		return nil, fmt.Errorf("manifest is for snapshot %s", m.SnapshotID)
	}
	if m.Version == 0 {
		m.Version = ManifestVersion
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt, _ = ParseSnapshotID(b.id)
	}
	files := b.Files()
	for rel, d := range m.Files {
		if got, ok := files[rel]; !ok || got != d {
			return nil, fmt.Errorf("manifest file %s was not built with that digest", rel)
		}
	}
	m.Files = files
	if err := m.check(); err != nil {
		return nil, err
	}
	return m.encode()
}

// install is steps 2 to 4 of Publish: the staging folder's files checked
// against their sizes and fsynced, the manifest enc written last, the
// folder renamed to final (whose parent is made when missing) and both
// parents fsynced.
func (b *Builder) install(final string, enc []byte) error {
	for rel, d := range b.Files() {
		st, err := os.Stat(filepath.Join(b.dir, filepath.FromSlash(rel)))
		if err != nil {
			return err
		}
		if st.Size() != d.Size {
			return &DigestError{File: rel, WantSize: d.Size, GotSize: st.Size(), WantSHA256: d.SHA256}
		}
	}
	if err := syncTree(b.dir); err != nil {
		return err
	}
	if err := crashPoint("synced"); err != nil {
		return err
	}
	if err := writeSynced(filepath.Join(b.dir, ManifestName), enc, crashPoint); err != nil {
		return err
	}
	if err := crashPoint("manifest"); err != nil {
		return err
	}
	parent := filepath.Dir(final)
	if err := os.MkdirAll(parent, filemode.Dir()); err != nil {
		return err
	}
	if err := syncDir(b.sourceDir); err != nil {
		return err
	}
	if err := os.Rename(b.dir, final); err != nil {
		return err
	}
	if err := syncDir(parent); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(b.dir)); err != nil {
		return err
	}
	return crashPoint("renamed")
}

// republish handles an id that is already published: same manifest → finish
// the current swap if needed and drop the staging folder (done); different →
// error; not published → not done.
func (b *Builder) republish(final string, enc []byte, pos binlogpos.Position) (bool, error) {
	old, err := os.ReadFile(filepath.Join(final, ManifestName))
	if os.IsNotExist(err) {
		if _, serr := os.Lstat(final); serr == nil {
			return false, fmt.Errorf("%s exists without a manifest", final)
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !bytes.Equal(old, enc) {
		return false, fmt.Errorf("already published with a different manifest")
	}
	if cur, err := ResolveCurrent(b.sourceDir); err == nil {
		if cur == b.id {
			return true, os.RemoveAll(b.dir)
		}
		cm, err := readManifest(Folder(b.sourceDir).Snapshot(cur))
		if err == nil && (cm.Position.Seq > pos.Seq || (cm.Position.Seq == pos.Seq && cur > b.id)) {
			return true, os.RemoveAll(b.dir) // current is newer: leave it
		}
	}
	if err := swapCurrent(b.sourceDir, b.id); err != nil {
		return false, err
	}
	return true, os.RemoveAll(b.dir)
}

// swapCurrent points <sourceDir>/current at snapshots/<id> with one rename.
func swapCurrent(sourceDir, id string) error {
	tmp := filepath.Join(sourceDir, "."+CurrentLink+".tmp")
	if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.Symlink(SnapshotsDir+"/"+id, tmp); err != nil {
		return err
	}
	if err := crashPoint("current-temp"); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(sourceDir, CurrentLink)); err != nil {
		return err
	}
	if err := crashPoint("current"); err != nil {
		return err
	}
	return syncDir(sourceDir)
}

// writeSynced writes path atomically: a temporary file, fsync, rename, fsync
// of the folder. crash is called after the temporary file is synced.
func writeSynced(path string, data []byte, crash func(string) error) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, filemode.File())
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = crash("manifest-temp")
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// syncTree fsyncs every file and folder under dir, folders after their
// contents.
func syncTree(dir string) error {
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		return syncFile(p)
	})
	if err != nil {
		return err
	}
	slices.Reverse(dirs)
	for _, d := range dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}

func syncFile(p string) error {
	f, err := os.OpenFile(p, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(p string) error { return syncFile(p) }

// ResolveCurrent returns the id of the snapshot <sourceDir>/current names.
// The link must be exactly "snapshots/<id>" and that snapshot must have its
// manifest. No current yet is an error wrapping fs.ErrNotExist.
func ResolveCurrent(sourceDir string) (string, error) {
	target, err := os.Readlink(filepath.Join(sourceDir, CurrentLink))
	if err != nil {
		return "", fmt.Errorf("resolve current: %w", err)
	}
	id, ok := strings.CutPrefix(filepath.ToSlash(target), SnapshotsDir+"/")
	if !ok {
		return "", fmt.Errorf("resolve current: link %q is not %s/<id>", target, SnapshotsDir)
	}
	if _, err := ParseSnapshotID(id); err != nil {
		return "", fmt.Errorf("resolve current: %w", err)
	}
	if _, err := os.Stat(filepath.Join(Folder(sourceDir).Snapshot(id), ManifestName)); err != nil {
		return "", fmt.Errorf("resolve current: snapshot %s: %w", id, err)
	}
	return id, nil
}
