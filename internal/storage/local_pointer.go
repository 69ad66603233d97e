package storage

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/flock"
)

// readPointer reads the symbolic link name.
func (l *localFolder) readPointer(ctx context.Context, name string) (string, error) {
	return readLink(l.path(name))
}

// readLink returns the value of the pointer p: the target of a symbolic
// link, or the content of a small regular file (as S3 would read it). A
// missing p or a folder is an error wrapping fs.ErrNotExist.
func readLink(p string) (string, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return "", err
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		return os.Readlink(p)
	case st.IsDir():
		return "", fmt.Errorf("%s is a folder: %w", p, fs.ErrNotExist)
	case !st.Mode().IsRegular() || st.Size() == 0 || st.Size() > maxPointerLen:
		return "", fmt.Errorf("%s is not a pointer", p)
	}
	b, err := os.ReadFile(p)
	return string(b), err
}

// swapPointer replaces the symbolic link name under the flock of
// .<name>.lock: a new link at a temporary name is renamed over it and the
// folder fsynced.
func (l *localFolder) swapPointer(ctx context.Context, name, old, next string) error {
	p := l.path(name)
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, filemode.Dir()); err != nil {
		return err
	}
	lock := filepath.Join(dir, "."+filepath.Base(p)+".lock")
	unlock, err := flock.Lock(ctx, lock)
	if err != nil {
		return fmt.Errorf("lock %s: %w", lock, err)
	}
	defer unlock()
	cur, err := readLink(p)
	if due, err := swapDue(name, cur, old, next, err); !due {
		return err
	}
	tmp, err := tempName(p)
	if err != nil {
		return err
	}
	if err := os.Symlink(next, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	return atomicfile.SyncDir(dir)
}
