package fold

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Column names of the key and op of a scratch file. They differ from the
// chain files' so that a table always written in full (which may have a
// column named bintrail_pk) can still be folded.
const (
	scratchKey = "dbtrail_fold_key"
	scratchOp  = "dbtrail_fold_op"
)

// WindowKeyCol and WindowOpCol are the key and op columns of a window
// file (WriteWindowFile, JoinWindowFiles).
const (
	WindowKeyCol = scratchKey
	WindowOpCol  = scratchOp
)

// Keyed is a file of rows with a key and an op column: a .upserts file
// (Upserts) or a scratch file of the engine.
type Keyed struct {
	Path          string
	KeyCol, OpCol string
}

// Upserts names a .upserts file.
func Upserts(path string) Keyed {
	return Keyed{Path: path, KeyCol: snapshot.ColPK, OpCol: snapshot.ColOp}
}

// Window is the row effects of one table's changes in a refresh window, in
// stream order, in a scratch file: each insert or update is an upsert of
// its key with the after image; each delete a delete of its key with the
// before image; an update that changed the key also deletes its old key
// (with the before image) just before it. The newest effect of a key is its
// state at the cut. Key columns of every effect hold the key's values, so
// the table file's rows of changed keys are found by joining on them.
type Window struct {
	Table   *schema.Table
	File    Keyed
	Events  int64
	Effects int64
}

// Remove deletes the scratch file.
func (w *Window) Remove() error { return os.Remove(w.File.Path) }

// Events yields a table's events in stream (seq) order to fn until it
// returns an error; index.Store.WindowEvents has this form.
type Events func(fn func(change.Event) error) error

// WriteWindow writes the effects of events into a scratch file named name
// under the engine's temp folder. An event that is not of table t (another
// table, an unknown op, a missing image) is an error naming its seq.
func (e *Engine) WriteWindow(t *schema.Table, name string, events Events) (*Window, error) {
	return WriteWindowFile(t, e.scratchPath(name), events)
}

// WriteWindowFile writes the effects of events into a new scratch file at
// path (Engine.WriteWindow without an engine: the live tail's windows,
// read by a query session's DuckDB). An event that is not of table t is an
// error naming its seq.
func WriteWindowFile(t *schema.Table, path string, events Events) (*Window, error) {
	w := &Window{Table: t, File: Keyed{Path: path, KeyCol: scratchKey, OpCol: scratchOp}}
	err := writeScratch(path, func(out io.Writer) error {
		kw, err := snapshot.NewKeyedWriter(out, t, snapshot.FooterMeta{}, snapshot.WriterOptions{}, scratchKey, scratchOp)
		if err != nil {
			return err
		}
		err = events(func(ev change.Event) error {
			w.Events++
			return addEffects(kw, t, ev)
		})
		if err != nil {
			return err
		}
		res, err := kw.Close()
		w.Effects = res.Rows
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("fold %s: window: %w", t.QualifiedName(), err)
	}
	return w, nil
}

// joinKeysMax bounds the keys JoinWindowFiles keeps in memory to fold a
// window: past it the rows are copied as they are.
const joinKeysMax = 1 << 20

// JoinWindowFiles writes the window files paths (scratch files of table
// t's windows of consecutive events, in stream order) as one window file
// at path: the window of all their events, folded to the newest effect of
// each key, in stream order. A reader of windows (the newest effect of a
// key is its row at the cut, unless a delete; a table row whose key a
// window row holds is stale) reads the same table from it; with more than
// joinKeysMax keys the rows are copied unfolded. A file of another
// table's columns is an error naming it; on an error no file is left at
// path.
func JoinWindowFiles(t *schema.Table, path string, paths []string) error {
	newest, err := newestEffects(t, paths)
	if err != nil {
		return fmt.Errorf("fold %s: join windows: %w", t.QualifiedName(), err)
	}
	err = writeScratch(path, func(out io.Writer) error {
		kw, err := snapshot.NewKeyedWriter(out, t, snapshot.FooterMeta{}, snapshot.WriterOptions{}, scratchKey, scratchOp)
		if err != nil {
			return err
		}
		var row int64
		err = eachWindowRow(t, paths, func(cells []rowimage.Cell, key, op string) error {
			row++
			if newest != nil && newest[key] != row {
				return nil
			}
			return kw.AppendSQL(cells, key, op)
		})
		if err != nil {
			return err
		}
		_, err = kw.Close()
		return err
	})
	if err != nil {
		return fmt.Errorf("fold %s: join windows: %w", t.QualifiedName(), err)
	}
	return nil
}

// newestEffects maps each key of the window files paths to the number
// (from 1, across the files in order) of its last row; nil with more than
// joinKeysMax keys.
func newestEffects(t *schema.Table, paths []string) (map[string]int64, error) {
	newest := map[string]int64{}
	var row int64
	err := eachWindowRow(t, paths, func(_ []rowimage.Cell, key, _ string) error {
		row++
		if newest == nil {
			return nil
		}
		if _, ok := newest[key]; !ok && len(newest) >= joinKeysMax {
			newest = nil
			return nil
		}
		newest[strings.Clone(key)] = row
		return nil
	})
	return newest, err
}

// eachWindowRow passes every row of the window files paths, in order, to
// fn; the row and its key and op are valid during the call.
func eachWindowRow(t *schema.Table, paths []string, fn func(cells []rowimage.Cell, key, op string) error) error {
	for _, p := range paths {
		if err := windowRows(t, p, fn); err != nil {
			return err
		}
	}
	return nil
}

// windowRows passes the rows of the window file path to fn.
func windowRows(t *schema.Table, path string, fn func(cells []rowimage.Cell, key, op string) error) error {
	r, err := snapshot.OpenKeyedFile(path, scratchKey, scratchOp)
	if err != nil {
		return err
	}
	defer r.Close()
	if !slices.Equal(r.Table().ColumnNames(), t.ColumnNames()) {
		return fmt.Errorf("%s: a window of %s (%v), not of its columns %v", path, r.Table().QualifiedName(), r.Table().ColumnNames(), t.ColumnNames())
	}
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		key, op, _ := r.Keyed()
		if err := fn(row, key, op); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
}

// EventError is an event of a window that cannot be folded into its table:
// an event of another table, a missing or malformed image, an image of
// another shape. Reading the same event again fails the same way, unless
// Err is an I/O error of the scratch file (see IsBadEvent).
type EventError struct {
	Seq uint64
	Op  change.Op
	PK  string
	Err error
}

func (e *EventError) Error() string {
	if e.Op == 0 {
		return fmt.Sprintf("event seq %d: %v", e.Seq, e.Err)
	}
	return fmt.Sprintf("event seq %d (%s of key %s): %v", e.Seq, e.Op, e.PK, e.Err)
}

func (e *EventError) Unwrap() error { return e.Err }

// IsBadEvent reports whether err is an *EventError that no retry can cure:
// one that is not an I/O error of the file being written.
func IsBadEvent(err error) bool {
	var ev *EventError
	var pe *fs.PathError
	var errno syscall.Errno
	return errors.As(err, &ev) && !errors.As(err, &pe) && !errors.As(err, &errno)
}

// addEffects appends one event's effects.
func addEffects(kw *snapshot.KeyedWriter, t *schema.Table, ev change.Event) error {
	if ev.Schema != t.Schema || ev.Table != t.Name {
		return &EventError{Seq: ev.Seq, Err: fmt.Errorf("an event of %s.%s in the window of %s", ev.Schema, ev.Table, t.QualifiedName())}
	}
	wrap := func(err error) error {
		if err != nil {
			return &EventError{Seq: ev.Seq, Op: ev.Op, PK: ev.PK, Err: err}
		}
		return nil
	}
	need := func(img []byte, what string) error {
		if img == nil {
			return wrap(fmt.Errorf("no %s image", what))
		}
		return nil
	}
	switch ev.Op {
	case change.OpInsert:
		if err := need(ev.After, "after"); err != nil {
			return err
		}
		return wrap(kw.AppendImage(ev.After, ev.PK, snapshot.OpUpsert))
	case change.OpUpdate:
		if err := need(ev.After, "after"); err != nil {
			return err
		}
		if ev.PKBefore != "" && ev.PKBefore != ev.PK {
			if err := need(ev.Before, "before"); err != nil {
				return err
			}
			if err := kw.AppendImage(ev.Before, ev.PKBefore, snapshot.OpDelete); err != nil {
				return wrap(err)
			}
		}
		return wrap(kw.AppendImage(ev.After, ev.PK, snapshot.OpUpsert))
	case change.OpDelete:
		if err := need(ev.Before, "before"); err != nil {
			return err
		}
		return wrap(kw.AppendImage(ev.Before, ev.PK, snapshot.OpDelete))
	}
	return wrap(fmt.Errorf("unknown op %q", byte(ev.Op)))
}

func (e *Engine) scratchPath(name string) string { return filepath.Join(e.tmp, name) }

// writeScratch writes a scratch file (no fsync: a crash loses the scratch
// folder's purpose, and a retry writes it again).
func writeScratch(path string, write func(io.Writer) error) error {
	f, err := filemode.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

func removeQuiet(path string) { _ = os.Remove(path) }
