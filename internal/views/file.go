package views

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// FileName is the name of a source's views file, <source dir>/views.sql.
const FileName = "views.sql"

// SnapshotDir returns the snapshot folder the views of o read:
// <SourceDir>/current, or <SourceDir>/snapshots/<Snapshot>.
func (o Options) SnapshotDir() string {
	if o.Snapshot != "" {
		return snapshot.Folder(o.SourceDir).Snapshot(o.Snapshot)
	}
	return filepath.Join(o.SourceDir, snapshot.CurrentLink)
}

// Render returns the views of the snapshot o reads, with its tables
// (TablesFromSnapshot, then Write). A source with no published snapshot, or
// a snapshot without tables, is an error.
func Render(o Options) ([]byte, []TableRef, error) {
	dir := o.SnapshotDir()
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if o.Snapshot != "" {
			return nil, nil, fmt.Errorf("views: snapshot %s does not exist (%s)", o.Snapshot, dir)
		}
		return nil, nil, fmt.Errorf("views: %s has no published snapshot (%s does not exist): run a backup first", o.SourceDir, dir)
	}
	tables, err := TablesFromSnapshot(dir)
	if err != nil {
		return nil, nil, err
	}
	if len(tables) == 0 {
		return nil, nil, fmt.Errorf("views: the snapshot at %s holds no table", dir)
	}
	var b bytes.Buffer
	if err := Write(&b, o, tables); err != nil {
		return nil, nil, err
	}
	return b.Bytes(), tables, nil
}

// WriteFile writes the views of o to path as a whole, crash-safely
// (atomicfile: a temporary file, fsync, rename, fsync of the folder): a
// reader sees the old file or the new one. It returns the tables written.
func WriteFile(path string, o Options) ([]TableRef, error) {
	text, tables, err := Render(o)
	if err != nil {
		return nil, err
	}
	if err := writeText(path, text); err != nil {
		return nil, err
	}
	return tables, nil
}

// SyncResult is what SyncFile did.
type SyncResult struct {
	Path   string // the views file
	Wrote  bool   // the file was (re)written
	Raw    bool   // the file holds raw views
	Tables int    // tables in the views
}

// SyncFile brings <sourceDir>/views.sql up to date with the snapshot current
// names, the way the worker does after each publish. It renders the views in
// the form the file holds (raw when its header says so, typed otherwise or
// when there is no file) and rewrites the file, crash-safely and as a whole,
// only when the text differs: when the set of tables, a table's columns or
// a column's type changed, or the file is missing or was edited. Views over
// current read every file through it, so an unchanged shape needs no new
// file. The caller serializes SyncFile with publishes of the source (the
// publish lock), so the last call after the last publish writes its shape.
func SyncFile(sourceDir string) (SyncResult, error) {
	res := SyncResult{Path: filepath.Join(sourceDir, FileName)}
	old, err := os.ReadFile(res.Path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("views: read %s: %w", res.Path, err)
	}
	res.Raw = isRaw(old)
	text, tables, err := Render(Options{SourceDir: sourceDir, Raw: res.Raw})
	if err != nil {
		return res, err
	}
	res.Tables = len(tables)
	if old != nil && bytes.Equal(old, text) {
		return res, nil
	}
	if err := writeText(res.Path, text); err != nil {
		return res, err
	}
	res.Wrote = true
	return res, nil
}

// isRaw reports whether the header of a views file says it holds raw views.
func isRaw(text []byte) bool {
	for line := range bytes.Lines(text) {
		if !bytes.HasPrefix(line, []byte("--")) {
			return false
		}
		if bytes.HasPrefix(line, []byte(modeRaw)) {
			return true
		}
	}
	return false
}

// writeText replaces path with text crash-safely.
func writeText(path string, text []byte) error {
	err := atomicfile.Write(path, filemode.File(), func(w io.Writer) error {
		_, err := w.Write(text)
		return err
	})
	if err != nil {
		return fmt.Errorf("views: %w", err)
	}
	return nil
}
