package filemode

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"syscall"
)

// Tightened is what Tighten changed under one folder.
type Tightened struct {
	Files, Dirs int
}

// Any is whether Tighten changed anything.
func (t Tightened) Any() bool { return t.Files+t.Dirs > 0 }

// Tighten takes from every regular file and folder under root (root
// included) the permission bits p does not allow: files keep at most
// p.File(), folders p.Dir() (a folder's setgid and sticky bits stay). A
// missing root is nothing to do. root itself is followed when it is a
// symbolic link (the operator named it); nothing under it is: a link is
// never changed nor walked through, and each entry is opened without
// following links and changed through that descriptor, so a link swapped in
// during the walk is refused, not followed. Sockets, pipes and devices are
// left alone. The first entry that cannot be changed stops the walk with an
// error naming it.
func Tighten(root string, p Policy) (Tightened, error) {
	var t Tightened
	top, err := filepath.EvalSymlinks(root)
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return t, fmt.Errorf("tighten %s: %w", root, err)
	}
	err = filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) { // removed meanwhile
				return nil
			}
			return err
		}
		allowed := p.File()
		switch {
		case d.IsDir():
			allowed = p.Dir()
		case !d.Type().IsRegular():
			return nil // a symbolic link, socket, pipe or device
		}
		changed, err := tightenOne(path, d.IsDir(), allowed)
		switch {
		case err != nil:
			return err
		case changed && d.IsDir():
			t.Dirs++
		case changed:
			t.Files++
		}
		return nil
	})
	if err != nil {
		return t, fmt.Errorf("tighten %s: %w", root, err)
	}
	return t, nil
}

// tightenOne drops from path the permission bits allowed does not hold,
// through a descriptor opened without following a link; it reports
// whether it changed anything.
func tightenOne(path string, dir bool, allowed os.FileMode) (bool, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return false, nil
		}
		return false, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return false, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	kind := st.Mode & syscall.S_IFMT
	if (dir && kind != syscall.S_IFDIR) || (!dir && kind != syscall.S_IFREG) {
		return false, nil // replaced by something else meanwhile
	}
	perm := st.Mode & 0o777
	if perm&^uint32(allowed) == 0 {
		return false, nil
	}
	keep := uint32(0)
	if dir {
		keep = st.Mode & (syscall.S_ISGID | syscall.S_ISVTX)
	}
	if err := syscall.Fchmod(fd, keep|perm&uint32(allowed)); err != nil {
		return false, &fs.PathError{Op: "chmod", Path: path, Err: err}
	}
	return true, nil
}

// OpenToOthers is whether the folder dir lets more than p allows reach it:
// any permission for others, or (under Private) for the group. It looks at
// dir itself (following a link), not below it: a folder others cannot
// enter keeps what is below from them.
func OpenToOthers(dir string, p Policy) (bool, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return false, err
	}
	return info.Mode().Perm()&^p.Dir() != 0, nil
}
