package moment

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// Table is one table opened at its moment: the table file and chain of a
// snapshot, their digests checked, and the window of events folded after
// them, staged in a scratch file of the engine. Close removes the scratch
// file.
type Table struct {
	// Footer is the snapshot's table file footer: the definition every row
	// follows (Footer.Table) and the CREATE TABLE.
	Footer   snapshot.FooterMeta
	Snapshot *snapshot.Snapshot
	// Events is the number of events in the window.
	Events int64
	at     fold.TableAt
	window *fold.Window
	engine *fold.Engine
	// scratch are the files a lineage's steps wrote, removed by Close.
	scratch []string
	// pending is a lineage's last reshape, not written yet (no window
	// follows it): Write maps it into its output; Rows reads it through
	// a scratch file.
	pending *pendingReshape
	// flush writes pending to a scratch file (the rebuilder's).
	flush func(context.Context) error
}

// Name is schema.table.
func (t *Table) Name() string { return t.at.Table.QualifiedName() }

// Close removes the window's scratch file.
func (t *Table) Close() error {
	var errs []error
	for _, p := range t.scratch {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	t.scratch = nil
	if t.window != nil {
		if err := t.window.Remove(); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
		t.window = nil
	}
	return errors.Join(errs...)
}

// Rows passes every row of the table at its moment to fn in the SQL text
// form (valid only during the call): the fold the refresh's rewrite does
// (fold.Engine.RowsAt), streamed with DuckDB's memory bounded.
func (t *Table) Rows(ctx context.Context, fn func(row []rowimage.Cell) error) error {
	if t.pending != nil {
		if err := t.flush(ctx); err != nil {
			return err
		}
	}
	return t.engine.RowsAt(ctx, t.at, t.window, fn)
}

// Write writes the table at its moment as a table file (the snapshot
// format, its footer from meta) to w: fold.Engine.Rewrite, the refresh's
// rewrite.
func (t *Table) Write(ctx context.Context, meta snapshot.FooterMeta, w io.Writer, progress fold.Progress) (snapshot.WriteResult, error) {
	if p := t.pending; p != nil && t.window == nil {
		return t.engine.Reshape(ctx, p.From, p.Map, p.To, meta, w, progress)
	}
	if t.pending != nil {
		if err := t.flush(ctx); err != nil {
			return snapshot.WriteResult{}, err
		}
	}
	in := fold.RewriteInput{Table: t.at.Table, TableFile: t.at.TableFile, Posdel: t.at.Posdel, Upserts: t.at.Upserts,
		Window: t.window, Meta: meta}
	return t.engine.Rewrite(ctx, in, w, progress)
}

// OpenSnapshotTable opens schema.table as it is at snap (no window): every
// file's digest is checked against the manifest first (a
// *snapshot.DigestError refuses it). It is how `export sql`, `verify` and
// the refresh read a table at a snapshot.
func OpenSnapshotTable(eng *fold.Engine, snap *snapshot.Snapshot, schemaName, table string) (*Table, error) {
	at, err := fold.SnapshotTable(snap, schemaName, table)
	if err != nil {
		return nil, err
	}
	return CheckedTable(eng, snap, at)
}

// CheckedTable is OpenSnapshotTable for a table whose files a caller
// already checked with fold.SnapshotTable (at): it reads the table file's
// footer only.
func CheckedTable(eng *fold.Engine, snap *snapshot.Snapshot, at fold.TableAt) (*Table, error) {
	foot, err := snapshot.ReadFooter(at.TableFile)
	if err != nil {
		return nil, err
	}
	if mt, ok := snap.Manifest.Table(at.Table.Schema, at.Table.Name); ok && mt.CreateTable != "" {
		foot.CreateTable = mt.CreateTable // a metadata-only schema change moved it
	}
	return &Table{Footer: foot, Snapshot: snap, at: at, engine: eng}, nil
}

// SnapshotError is a table of a snapshot that cannot be read: a file that
// fails its digest (*snapshot.DigestError), a footer that disagrees with
// the manifest, a table the snapshot does not hold.
type SnapshotError struct {
	ID  string
	Err error
}

func (e *SnapshotError) Error() string { return e.Err.Error() }
func (e *SnapshotError) Unwrap() error { return e.Err }

// Rebuilder opens the tables of a Plan: the seam every reader of a table at
// a moment goes through.
type Rebuilder struct {
	Source  string
	Engine  *fold.Engine
	Events  Events
	Catalog Catalog
}

// Open opens tp at its moment: its snapshot's files (digest-checked), then
// its window's events (After, Upto] from r.Events, staged as the window's
// effects in a scratch file of the engine. progress, when set, is told the
// events staged. Close the table when done.
func (r *Rebuilder) Open(ctx context.Context, tp TablePlan, progress fold.Progress) (*Table, error) {
	if tp.Lineage != nil && tp.Lineage.Folded() {
		return r.openLineage(ctx, tp, progress)
	}
	snap, err := r.Catalog.Open(ctx, tp.Snapshot)
	if err != nil {
		return nil, err
	}
	t, err := OpenSnapshotTable(r.Engine, snap, tp.Schema, tp.Table)
	if err != nil {
		return nil, &SnapshotError{ID: tp.Snapshot, Err: err}
	}
	if tp.Def != nil {
		// Its definition alone moved since the snapshot: the CREATE TABLE
		// of then (its rows and columns are the snapshot's).
		t.Footer.CreateTable = r.createTableAt(ctx, tp, tp.Def)
	}
	if tp.Upto <= tp.After {
		return t, nil
	}
	if err := r.stageWindow(ctx, t, tp.After, tp.Upto, progress); err != nil {
		return nil, err
	}
	return t, nil
}

// stageWindow stages the events of t's table (t.at.Table's name) with
// after < seq <= upto as t's window.
func (r *Rebuilder) stageWindow(ctx context.Context, t *Table, after, upto uint64, progress fold.Progress) error {
	def := t.at.Table
	name := "moment-" + def.Schema + "." + def.Name + "-" + rand.Text()
	var n int64
	w, err := r.Engine.WriteWindow(def, name, func(fn func(change.Event) error) error {
		return r.Events.TableEvents(ctx, r.Source, def.Schema, def.Name, after, upto, func(e change.Event) error {
			n++
			if progress != nil && n%(64*1024) == 0 {
				progress("events", n)
			}
			return fn(e)
		})
	})
	if err != nil {
		return err
	}
	t.window = w
	t.Events += w.Events
	return nil
}

// OpenScratch opens a fold engine in a new folder under dir (os.TempDir()
// when empty; created if missing) for a process that reads tables outside
// a worker (the CLI's export and verify). done closes the engine and
// removes the folder.
func OpenScratch(ctx context.Context, dir, prefix string) (e *fold.Engine, done func() error, err error) {
	if dir != "" {
		if err := os.MkdirAll(dir, filemode.Dir()); err != nil {
			return nil, nil, fmt.Errorf("scratch folder: %w", err)
		}
	}
	tmp, err := os.MkdirTemp(dir, prefix)
	if err != nil {
		return nil, nil, fmt.Errorf("scratch folder: %w", err)
	}
	e, err = fold.Open(ctx, fold.Options{TempDir: tmp, MemoryLimit: fold.DefaultMemoryLimit})
	if err != nil {
		os.RemoveAll(tmp)
		return nil, nil, err
	}
	return e, func() error {
		err := e.Close()
		if rerr := os.RemoveAll(tmp); err == nil && rerr != nil {
			err = fmt.Errorf("scratch folder: %w", rerr)
		}
		return err
	}, nil
}
