package storage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/filemode"
)

// Local is a Store in a folder of the local file system: the object name
// "a/b/c" is the file <root>/a/b/c. Writes are crash-safe: a temporary file
// in the target's folder, fsync, rename over the target, fsync the folder.
// Copy is a hard link (a copy where the file system refuses one). A pointer
// is a symbolic link whose target is the value, replaced by one rename
// under an flock of the hidden file .<pointer>.lock beside it. Empty folders
// left by Delete stay; List ignores folders. The SHA-256 of an object is
// not recorded: Stat reports it empty.
type Local struct {
	checked
	*localFolder
}

// localFolder is Local's backend.
type localFolder struct {
	root string
}

// NewLocal returns the Store in the folder root, creating the folder if it
// is missing.
func NewLocal(root string) (*Local, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("open local store %s: %w", root, err)
	}
	if err := os.MkdirAll(abs, filemode.Dir()); err != nil {
		return nil, fmt.Errorf("open local store %s: %w", abs, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("open local store %s: %w", abs, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("open local store %s: not a folder", abs)
	}
	f := &localFolder{root: abs}
	return &Local{checked{f}, f}, nil
}

// Root returns the folder.
func (l *localFolder) Root() string { return l.root }

// location returns the folder as a file URL.
func (l *localFolder) location() string { return "file://" + filepath.ToSlash(l.root) }

// path returns the file of a checked name.
func (l *localFolder) path(name string) string {
	return filepath.Join(l.root, filepath.FromSlash(name))
}

// put writes body to a temporary file beside name while checking its
// digest, then renames it over name.
func (l *localFolder) put(ctx context.Context, name string, body io.Reader, d digest.Digest) error {
	p := l.path(name)
	if err := os.MkdirAll(filepath.Dir(p), filemode.Dir()); err != nil {
		return err
	}
	return atomicfile.Write(p, filemode.File(), func(w io.Writer) error {
		_, err := io.Copy(w, newVerifyingReader(ctx, name, body, d))
		return err
	})
}

// copy hard-links src to a temporary name beside dst and renames it over
// dst. Where the file system refuses a hard link (another file system, too
// many links, no permission) the file is copied and its size checked.
func (l *localFolder) copy(ctx context.Context, src, dst string) error {
	sp, dp := l.path(src), l.path(dst)
	sst, err := regularFile(sp)
	if err != nil {
		return err
	}
	if dst == src {
		return nil
	}
	if dstat, err := os.Lstat(dp); err == nil && os.SameFile(sst, dstat) {
		return nil // already linked
	}
	if err := os.MkdirAll(filepath.Dir(dp), filemode.Dir()); err != nil {
		return err
	}
	tmp, err := linkTemp(sp, dp)
	if errors.Is(err, syscall.EXDEV) || errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EMLINK) {
		return copyFile(ctx, sp, dp, sst.Size())
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, dp); err != nil {
		os.Remove(tmp)
		return err
	}
	return atomicfile.SyncDir(filepath.Dir(dp))
}

// touch sets the file's modification time to now. A hard link shares it
// with every name of the file, which only makes those younger.
func (l *localFolder) touch(ctx context.Context, name string) error {
	p := l.path(name)
	if _, err := regularFile(p); err != nil {
		return err
	}
	now := time.Now()
	return os.Chtimes(p, now, now)
}

// linkTemp hard-links from to a new hidden temporary name beside to.
func linkTemp(from, to string) (string, error) {
	for {
		tmp, err := tempName(to)
		if err != nil {
			return "", err
		}
		err = os.Link(from, tmp)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return tmp, err
	}
}

// tempName returns a hidden temporary name beside p: .<base>.<random>.tmp.
func tempName(p string) (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+"."+hex.EncodeToString(b)+".tmp"), nil
}

// copyFile copies from to to crash-safely and checks the size.
func copyFile(ctx context.Context, from, to string, size int64) error {
	f, err := os.Open(from)
	if err != nil {
		return err
	}
	defer f.Close()
	return atomicfile.Write(to, filemode.File(), func(w io.Writer) error {
		n, err := io.Copy(w, ctxReader{ctx, f})
		if err == nil && n != size {
			err = fmt.Errorf("copied %d bytes of %d: the source changed", n, size)
		}
		return err
	})
}

// regularFile returns the Lstat of p, an error wrapping fs.ErrNotExist when
// p is missing or a folder, and an error when it is anything but a file.
func regularFile(p string) (fs.FileInfo, error) {
	st, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	switch {
	case st.IsDir():
		return nil, fmt.Errorf("%s is a folder: %w", p, fs.ErrNotExist)
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	return st, nil
}

// stat returns the size and modification time of the file, or of a pointer
// (the length of its value).
func (l *localFolder) stat(ctx context.Context, name string) (Info, error) {
	p := l.path(name)
	st, err := os.Lstat(p)
	if err == nil && st.IsDir() {
		err = fmt.Errorf("%s is a folder: %w", p, fs.ErrNotExist)
	}
	if err != nil {
		return Info{}, err
	}
	info := Info{Name: name, Size: st.Size(), ModTime: st.ModTime()}
	if st.Mode()&fs.ModeSymlink != 0 {
		v, err := os.Readlink(p)
		if err != nil {
			return Info{}, err
		}
		info.Size = int64(len(v))
	}
	return info, nil
}

// open opens the file, or returns a pointer's value as its content.
func (l *localFolder) open(ctx context.Context, name string) (io.ReadCloser, error) {
	r, err := l.openReaderAt(ctx, name)
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(r, 0, r.Size()), r}, nil
}

// openReaderAt opens the file for ranged reads.
func (l *localFolder) openReaderAt(ctx context.Context, name string) (ReaderAt, error) {
	p := l.path(name)
	st, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		v, err := os.Readlink(p)
		if err != nil {
			return nil, err
		}
		return bytesReaderAt{strings.NewReader(v)}, nil
	}
	if _, err := regularFile(p); err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	st, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return fileReaderAt{f, st.Size()}, nil
}

type fileReaderAt struct {
	*os.File
	size int64
}

func (f fileReaderAt) Size() int64 { return f.size }

type bytesReaderAt struct{ *strings.Reader }

func (bytesReaderAt) Close() error { return nil }

// list walks the folders the prefix can reach and reports files and
// pointers, skipping temporary and lock files.
func (l *localFolder) list(ctx context.Context, prefix string, fn func(Info) error) error {
	dir := ""
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dir = prefix[:i]
	}
	start := l.root
	if dir != "" {
		start = l.path(dir)
	}
	var infos []Info
	err := filepath.WalkDir(start, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == start && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(l.root, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if !strings.HasPrefix(name, prefix) || reserved(name) {
			return nil
		}
		info, err := l.stat(ctx, name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed meanwhile
		}
		if err != nil {
			return err
		}
		infos = append(infos, info)
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	for _, info := range infos {
		if err := fn(info); err != nil {
			return err
		}
	}
	return nil
}

// delete removes the file or pointer; a missing one is success.
func (l *localFolder) delete(ctx context.Context, name string) error {
	p := l.path(name)
	st, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil && st.IsDir() {
		err = fmt.Errorf("%s is a folder", p)
	}
	if err == nil {
		err = os.Remove(p)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return atomicfile.SyncDir(filepath.Dir(p))
}

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
