package snapshot

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dbtrail/dbtrail/internal/filemode"
)

// DownloadPath returns the folder in which snapshot id is assembled.
func DownloadPath(sourceDir, id string) string { return Folder(sourceDir).Download(id) }

// Install publishes a snapshot assembled in <sourceDir>/.download/<id>/ (a
// copy of a snapshot published elsewhere, its manifest.json written last)
// under snapshots/<id>, without touching current:
//
//  1. the manifest must be for id, and every file it lists present with its
//     size (the caller checked each file's sha256 as it wrote it);
//  2. every file and folder is fsynced;
//  3. the folder is renamed to snapshots/<id> and snapshots/ fsynced.
//
// An id already published with the same manifest bytes is success (the
// download folder is removed); with other bytes it is an error.
func Install(sourceDir, id string) error {
	if err := install(sourceDir, id); err != nil {
		return fmt.Errorf("install snapshot %s: %w", id, err)
	}
	return nil
}

func install(sourceDir, id string) error {
	if _, err := ParseSnapshotID(id); err != nil {
		return err
	}
	dir := DownloadPath(sourceDir, id)
	enc, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		return err
	}
	m, err := ParseManifest(enc)
	if err != nil {
		return err
	}
	if m.SnapshotID != id {
		return fmt.Errorf("manifest is for snapshot %s", m.SnapshotID)
	}
	final := Folder(sourceDir).Snapshot(id)
	if old, err := os.ReadFile(filepath.Join(final, ManifestName)); err == nil {
		if !bytes.Equal(old, enc) {
			return fmt.Errorf("already published with a different manifest")
		}
		return os.RemoveAll(dir)
	} else if !os.IsNotExist(err) {
		return err
	}
	if _, err := os.Lstat(final); err == nil {
		return fmt.Errorf("%s exists without a manifest", final)
	}
	for rel, d := range m.Files {
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return err
		}
		if st.Size() != d.Size {
			return &DigestError{File: rel, WantSize: d.Size, GotSize: st.Size(), WantSHA256: d.SHA256}
		}
	}
	if err := syncTree(dir); err != nil {
		return err
	}
	snaps := Folder(sourceDir).Snapshots()
	if err := os.MkdirAll(snaps, filemode.Dir()); err != nil {
		return err
	}
	if err := syncDir(sourceDir); err != nil {
		return err
	}
	if err := os.Rename(dir, final); err != nil {
		return err
	}
	if err := syncDir(snaps); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dir))
}

// SetCurrent points <sourceDir>/current at snapshots/<id> with one rename,
// whatever current named before. The snapshot must be published (have its
// manifest). The caller holds the publish lock and decides whether current
// may move (Publish has its own rules).
func SetCurrent(sourceDir, id string) error {
	if _, err := ParseSnapshotID(id); err != nil {
		return fmt.Errorf("set current: %w", err)
	}
	if _, err := os.Stat(filepath.Join(Folder(sourceDir).Snapshot(id), ManifestName)); err != nil {
		return fmt.Errorf("set current to %s: %w", id, err)
	}
	if err := swapCurrent(sourceDir, id); err != nil {
		return fmt.Errorf("set current to %s: %w", id, err)
	}
	return nil
}
