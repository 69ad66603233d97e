package snapshot

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/filemode"
)

// AttachBuilder returns a Builder for the staging folder of snapshot id as it
// is, without removing what earlier steps wrote: a snapshot built by several
// activities (one per table, possibly in other processes) is staged by one
// NewBuilder, filled by AttachBuilder in each activity, and published by an
// AttachBuilder that Adopts every file with the digest its writer returned.
func AttachBuilder(sourceDir, id string) (*Builder, error) {
	if _, err := ParseSnapshotID(id); err != nil {
		return nil, err
	}
	dir := Folder(sourceDir).Staging(id)
	if err := os.MkdirAll(dir, filemode.Dir()); err != nil {
		return nil, fmt.Errorf("attach snapshot %s: %w", id, err)
	}
	return &Builder{sourceDir: sourceDir, id: id, dir: dir, files: map[string]digest.Digest{}}, nil
}

// Adopt records rel, already written in staging by another Builder, with the
// digest its writer computed. The size is checked here, the content through
// the manifest on every later read. When the snapshot was already published
// (a retried publish whose staging folder was renamed into place), the
// published file is checked instead, so Publish can finish the swap of
// current.
func (b *Builder) Adopt(rel string, d digest.Digest) error {
	p, err := b.target(rel)
	if err != nil {
		return err
	}
	st, err := os.Stat(p)
	if os.IsNotExist(err) {
		st, err = os.Stat(filepath.Join(Folder(b.sourceDir).Snapshot(b.id), filepath.FromSlash(rel)))
	}
	if err != nil {
		return fmt.Errorf("adopt %s into snapshot %s: %w", rel, b.id, err)
	}
	if st.Size() != d.Size {
		return &DigestError{File: rel, WantSize: d.Size, GotSize: st.Size(), WantSHA256: d.SHA256}
	}
	b.record(rel, d)
	return nil
}
