package snapshot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies the files of a published snapshot folder into to (a
// download would fetch them from object storage).
func copyTree(t *testing.T, from, to string, skip func(rel string) bool) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if skip != nil && skip(filepath.ToSlash(rel)) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(to, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestInstallAndSetCurrent(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	rows, _ := allTypesRows()
	id := pruneIDs[0]
	b, m := build(t, src, id, 10, rows)
	if err := b.Publish(m); err != nil {
		t.Fatal(err)
	}
	published := Folder(src).Snapshot(id)

	// A download that lacks a file is refused and left in place.
	copyTree(t, published, DownloadPath(dst, id), func(rel string) bool { return strings.HasSuffix(rel, ".upserts") })
	if err := Install(dst, id); err == nil {
		t.Fatal("install of an incomplete download succeeded")
	}
	if _, err := os.Stat(Folder(dst).Snapshot(id)); !os.IsNotExist(err) {
		t.Fatalf("incomplete snapshot installed: %v", err)
	}
	// Complete, it installs; current is not touched until SetCurrent.
	copyTree(t, published, DownloadPath(dst, id), nil)
	if err := Install(dst, id); err != nil {
		t.Fatal(err)
	}
	if cur := checkCurrent(t, dst); cur != "" {
		t.Fatalf("install moved current to %q", cur)
	}
	if err := SetCurrent(dst, id); err != nil {
		t.Fatal(err)
	}
	if cur := checkCurrent(t, dst); cur != id {
		t.Fatalf("current %q", cur)
	}
	checkReadable(t, dst, id)
	if _, err := os.Stat(DownloadPath(dst, id)); !os.IsNotExist(err) {
		t.Fatalf("download folder left: %v", err)
	}
	// Installing the same manifest again is success and drops the folder;
	// another manifest under the same id is an error.
	copyTree(t, published, DownloadPath(dst, id), nil)
	if err := Install(dst, id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(DownloadPath(dst, id)); !os.IsNotExist(err) {
		t.Fatalf("download folder left: %v", err)
	}
	copyTree(t, published, DownloadPath(dst, id), nil)
	mp := filepath.Join(DownloadPath(dst, id), ManifestName)
	enc, _ := os.ReadFile(mp)
	if err := os.WriteFile(mp, []byte(strings.Replace(string(enc), `"source"`, `"source" `, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Install(dst, id); err == nil || !strings.Contains(err.Error(), "different manifest") {
		t.Fatalf("install over another manifest: %v", err)
	}
	if err := SetCurrent(dst, pruneIDs[1]); err == nil {
		t.Fatal("SetCurrent to a snapshot that is not published succeeded")
	}
}
