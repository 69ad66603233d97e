// Package atomicfile writes files crash-safely: a temporary file in the same
// folder, fsync, rename over the target, fsync the folder. A reader sees the
// old file or the new one, never a part.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write writes path through write with mode perm. On error the temporary
// file is removed and path is untouched.
func Write(path string, perm os.FileMode, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err = write(bw); err != nil {
		return err
	}
	for _, step := range []func() error{bw.Flush, func() error { return f.Chmod(perm) }, f.Sync, f.Close} {
		if err = step(); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a folder so a rename in it survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}

// File is a file being written crash-safely: its bytes go to a temporary
// file in the target's folder, and Commit moves them under the target's
// name (fsync, rename, fsync the folder). Abort, or a crash, leaves the
// target untouched. Use Write when one callback writes the whole file.
type File struct {
	path string
	f    *os.File
	bw   *bufio.Writer
	done bool
}

// Create starts writing path with mode perm.
func Create(path string, perm os.FileMode) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &File{path: path, f: f, bw: bufio.NewWriterSize(f, 1<<20)}, nil
}

// Write writes to the temporary file.
func (a *File) Write(p []byte) (int, error) { return a.bw.Write(p) }

// Commit makes the written bytes the file at the target path.
func (a *File) Commit() error {
	if a.done {
		return fmt.Errorf("write %s: already committed or aborted", a.path)
	}
	a.done = true
	for _, step := range []func() error{a.bw.Flush, a.f.Sync, a.f.Close} {
		if err := step(); err != nil {
			a.f.Close()
			os.Remove(a.f.Name())
			return fmt.Errorf("write %s: %w", a.path, err)
		}
	}
	if err := os.Rename(a.f.Name(), a.path); err != nil {
		os.Remove(a.f.Name())
		return fmt.Errorf("write %s: %w", a.path, err)
	}
	return SyncDir(filepath.Dir(a.path))
}

// Abort removes the temporary file; after Commit it does nothing.
func (a *File) Abort() {
	if a.done {
		return
	}
	a.done = true
	a.f.Close()
	os.Remove(a.f.Name())
}
