package snapshot

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/filemode"
)

// Builder builds one snapshot in its staging folder
// <source dir>/.staging/<id>/ and publishes it (see Publish). Files are added
// with WriteFile (hashed as written) or Link (a hard link to a previous
// snapshot's file, with that file's digest). WriteFile and Link are safe for
// concurrent use on different paths.
type Builder struct {
	sourceDir, id, dir string

	mu    sync.Mutex
	files map[string]digest.Digest
}

// NewBuilder starts building snapshot id of the source folder sourceDir. A
// staging folder left by an earlier attempt (a crash, a retried activity) is
// removed first, so a rerun starts clean.
func NewBuilder(sourceDir, id string) (*Builder, error) {
	if _, err := ParseSnapshotID(id); err != nil {
		return nil, err
	}
	dir := Folder(sourceDir).Staging(id)
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("build snapshot %s: remove old staging: %w", id, err)
	}
	if err := os.MkdirAll(dir, filemode.Dir()); err != nil {
		return nil, fmt.Errorf("build snapshot %s: %w", id, err)
	}
	return &Builder{sourceDir: sourceDir, id: id, dir: dir, files: map[string]digest.Digest{}}, nil
}

// ID returns the snapshot id.
func (b *Builder) ID() string { return b.id }

// Dir returns the staging folder.
func (b *Builder) Dir() string { return b.dir }

// Files returns a copy of the digests of the files added so far.
func (b *Builder) Files() map[string]digest.Digest {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]digest.Digest, len(b.files))
	for k, v := range b.files {
		out[k] = v
	}
	return out
}

// target checks rel and creates its parent folder in staging.
func (b *Builder) target(rel string) (string, error) {
	if err := checkRel(rel); err != nil {
		return "", err
	}
	p := filepath.Join(b.dir, filepath.FromSlash(rel))
	return p, os.MkdirAll(filepath.Dir(p), filemode.Dir())
}

// WriteFile creates the staging file rel (a '/'-separated path relative to the
// snapshot folder, replacing any earlier one), calls write with a buffered
// writer that hashes (sha256) and counts what passes through, then flushes,
// fsyncs and closes the file and records its digest. On error the file is
// removed.
func (b *Builder) WriteFile(rel string, write func(io.Writer) error) (digest.Digest, error) {
	d, err := b.writeFile(rel, write)
	if err != nil {
		return digest.Digest{}, fmt.Errorf("build snapshot %s: write %s: %w", b.id, rel, err)
	}
	return d, nil
}

func (b *Builder) writeFile(rel string, write func(io.Writer) error) (digest.Digest, error) {
	p, err := b.target(rel)
	if err != nil {
		return digest.Digest{}, err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, filemode.File())
	if err != nil {
		return digest.Digest{}, err
	}
	h := sha256.New()
	cw := &countingWriter{w: io.MultiWriter(f, h)}
	bw := bufio.NewWriterSize(cw, 1<<20)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
		return digest.Digest{}, err
	}
	d := digest.Digest{SHA256: hex.EncodeToString(h.Sum(nil)), Size: cw.n}
	b.record(rel, d)
	return d, nil
}

func (b *Builder) record(rel string, d digest.Digest) {
	b.mu.Lock()
	b.files[rel] = d
	b.mu.Unlock()
}

// Link adds rel as a hard link to fromPath, a file of a previous snapshot
// whose manifest digest is d, and records d without reading the file: its
// size is checked, its content is not (the previous snapshot's manifest
// vouches for it, and a later Verify of the new snapshot catches a file
// altered since). When hard links are impossible (another file system) the
// file is copied and the copy's digest must equal d.
func (b *Builder) Link(rel, fromPath string, d digest.Digest) error {
	if err := b.link(rel, fromPath, d); err != nil {
		return fmt.Errorf("build snapshot %s: link %s: %w", b.id, rel, err)
	}
	return nil
}

func (b *Builder) link(rel, fromPath string, d digest.Digest) error {
	p, err := b.target(rel)
	if err != nil {
		return err
	}
	st, err := os.Stat(fromPath)
	if err != nil {
		return err
	}
	if st.Size() != d.Size {
		return &DigestError{File: fromPath, WantSize: d.Size, GotSize: st.Size(), WantSHA256: d.SHA256}
	}
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		return err
	}
	err = os.Link(fromPath, p)
	if errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EMLINK) {
		got, cerr := b.writeFile(rel, func(w io.Writer) error { return copyFile(w, fromPath) })
		if cerr != nil {
			return cerr
		}
		if got != d {
			os.Remove(p)
			b.forget(rel)
			return &DigestError{File: fromPath, WantSize: d.Size, GotSize: got.Size, WantSHA256: d.SHA256, GotSHA256: got.SHA256}
		}
		return nil
	}
	if err != nil {
		return err
	}
	b.record(rel, d)
	return nil
}

func (b *Builder) forget(rel string) {
	b.mu.Lock()
	delete(b.files, rel)
	b.mu.Unlock()
}

func copyFile(w io.Writer, from string) error {
	f, err := os.Open(from)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// fileHashes counts files read in full to compute a digest (tests check that
// Link reads nothing).
var fileHashes struct {
	sync.Mutex
	n int
}

// digestOf hashes r to its end.
func digestOf(r io.Reader) (digest.Digest, error) {
	fileHashes.Lock()
	fileHashes.n++
	fileHashes.Unlock()
	var h hash.Hash = sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return digest.Digest{}, err
	}
	return digest.Digest{SHA256: hex.EncodeToString(h.Sum(nil)), Size: n}, nil
}
