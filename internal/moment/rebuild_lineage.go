package moment

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"reflect"

	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/schemahist"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// openLineage opens tp across its lineage's schema changes: the table at
// After (its base name's files in tp.Snapshot, or nothing when it was
// created), then per step the events before it folded into a scratch table
// file and the step applied to that file's rows (reshaped, emptied,
// renamed), then the events after the last step staged as the window.
// Every scratch file is the engine's and removed by Close.
func (r *Rebuilder) openLineage(ctx context.Context, tp TablePlan, progress fold.Progress) (*Table, error) {
	l := tp.Lineage
	steps := l.Steps
	t := &Table{engine: r.Engine}
	t.flush = func(ctx context.Context) error { return r.flushReshape(ctx, t, nil) }
	after := tp.After
	if l.Created {
		if len(steps) == 0 || steps[0].Kind != schemahist.StepEmpty {
			return nil, fmt.Errorf("rebuild %s.%s: a created table's lineage must start empty", tp.Schema, tp.Table)
		}
		if err := r.startEmpty(t, steps[0]); err != nil {
			return nil, err
		}
		after, steps = steps[0].Seq, steps[1:]
	} else {
		snap, err := r.Catalog.Open(ctx, tp.Snapshot)
		if err != nil {
			return nil, err
		}
		base, err := OpenSnapshotTable(r.Engine, snap, l.Base.Schema, l.Base.Table)
		if err != nil {
			return nil, &SnapshotError{ID: tp.Snapshot, Err: err}
		}
		t.Footer, t.Snapshot, t.at = base.Footer, snap, base.at
	}
	for _, s := range steps {
		var err error
		switch s.Kind {
		case schemahist.StepKeep:
			t.at.Table = s.Def // same columns and key: the events on either side fold alike
			if t.pending != nil {
				t.pending.To = s.Def // the reshape still to write lands in the newer definition
			}
			continue
		case schemahist.StepEmpty:
			t.pending = nil // the rows a reshape would have mapped are gone
			err = r.startEmpty(t, s)
		case schemahist.StepRename, schemahist.StepReshape:
			if err = r.flushReshape(ctx, t, progress); err == nil {
				err = r.materialize(ctx, t, after, s.Seq, progress)
			}
			if err == nil && s.Kind == schemahist.StepReshape {
				err = deferReshape(t, s)
			}
			t.at.Table = s.Def
		default:
			err = fmt.Errorf("unknown step kind %q", s.Kind)
		}
		if err != nil {
			t.Close()
			return nil, fmt.Errorf("rebuild %s.%s: %s: %w", tp.Schema, tp.Table, s.What, err)
		}
		after = s.Seq
	}
	t.Footer.Table = t.at.Table
	if t.Footer.CreateTable == "" || l.Folded() {
		t.Footer.CreateTable = r.createTableAt(ctx, tp, t.at.Table)
	}
	if tp.Upto > after {
		if err := r.stageAfterLineage(ctx, t, after, tp.Upto, progress); err != nil {
			t.Close()
			return nil, err
		}
	}
	return t, nil
}

// stageAfterLineage stages the events after < seq <= upto as t's window. A
// reshape still pending (deferReshape) stays pending when the window is
// empty, so that Write maps the rows straight into the final file;
// otherwise it is written first, as the window's rows fold over the new
// shape.
func (r *Rebuilder) stageAfterLineage(ctx context.Context, t *Table, after, upto uint64, progress fold.Progress) error {
	if err := r.stageWindow(ctx, t, after, upto, progress); err != nil {
		return err
	}
	if t.pending == nil {
		return nil
	}
	if t.window.Events == 0 {
		w := t.window
		t.window = nil
		return w.Remove()
	}
	return r.flushReshape(ctx, t, progress)
}

// scratchFile creates a new scratch file of the engine for t; Close
// removes it.
func (r *Rebuilder) scratchFile(t *Table, what string, write func(io.Writer) error) (string, error) {
	path := r.Engine.TempDir() + "/lineage-" + what + "-" + rand.Text() + ".parquet"
	f, err := filemode.Create(path)
	if err != nil {
		return "", err
	}
	t.scratch = append(t.scratch, path)
	if err := write(f); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

// startEmpty makes t an empty table of step s's definition.
func (r *Rebuilder) startEmpty(t *Table, s schemahist.Step) error {
	path, err := r.scratchFile(t, "empty", func(w io.Writer) error {
		tw, err := snapshot.NewTableWriter(w, s.Def, snapshot.FooterMeta{}, snapshot.WriterOptions{})
		if err != nil {
			return err
		}
		_, err = tw.Close()
		return err
	})
	if err != nil {
		return err
	}
	t.at = fold.TableAt{Table: s.Def, TableFile: path}
	return nil
}

// materialize folds t's events after < seq <= upto into one scratch table
// file, which t then reads (no chain, no window). A table file with no
// chain (or only empty chain files) and no events in the range is kept as
// it is.
func (r *Rebuilder) materialize(ctx context.Context, t *Table, after, upto uint64, progress fold.Progress) error {
	if err := r.stageWindow(ctx, t, after, upto, progress); err != nil {
		return err
	}
	w := t.window
	t.window = nil
	defer w.Remove()
	at, err := t.at.WithoutEmptyChain()
	if err != nil {
		return err
	}
	t.at = at
	if w.Events == 0 && len(t.at.Posdel) == 0 && len(t.at.Upserts) == 0 {
		return nil
	}
	in := fold.RewriteInput{Table: t.at.Table, TableFile: t.at.TableFile, Posdel: t.at.Posdel, Upserts: t.at.Upserts, Window: w}
	path, err := r.scratchFile(t, "step", func(out io.Writer) error {
		_, err := r.Engine.Rewrite(ctx, in, out, progress)
		return err
	})
	if err != nil {
		return err
	}
	t.at = fold.TableAt{Table: t.at.Table, TableFile: path}
	return nil
}

// pendingReshape is a reshape step not written yet: the rows of the table
// file From mapped by Map to the definition To. A table whose last step is
// a reshape with no event after it is written once, by Write, straight
// from the previous file (one pass over the rows, not two).
type pendingReshape struct {
	From string
	Map  schema.Reshape
	To   *schema.Table
}

// deferReshape records step s's reshape of t's rows (a single table file,
// after materialize) as pending.
func deferReshape(t *Table, s schemahist.Step) error {
	if s.Reshape == nil {
		return fmt.Errorf("a reshape step without its column map")
	}
	t.pending = &pendingReshape{From: t.at.TableFile, Map: *s.Reshape, To: s.Def}
	t.at = fold.TableAt{Table: s.Def}
	return nil
}

// flushReshape writes t's pending reshape, if any, to a scratch table file
// t then reads.
func (r *Rebuilder) flushReshape(ctx context.Context, t *Table, progress fold.Progress) error {
	p := t.pending
	if p == nil {
		return nil
	}
	path, err := r.scratchFile(t, "reshape", func(out io.Writer) error {
		_, err := r.Engine.Reshape(ctx, p.From, p.Map, p.To, snapshot.FooterMeta{}, out, progress)
		return err
	})
	if err != nil {
		return err
	}
	t.pending = nil
	t.at = fold.TableAt{Table: p.To, TableFile: path}
	return nil
}

// createTableAt is the CREATE TABLE of a table rebuilt through a folded
// lineage, or whose definition alone moved (TablePlan.Def), whose
// definition at the moment is def: the source's own text
// from tp.CreateFrom's table file when that snapshot holds the same stored
// definition, otherwise rendered from def. A later snapshot that cannot be
// read only costs the exact text, never the rebuild.
func (r *Rebuilder) createTableAt(ctx context.Context, tp TablePlan, def *schema.Table) string {
	rendered := snapshot.CreateTableSQL(def)
	if tp.CreateFrom == "" {
		return rendered
	}
	snap, err := r.Catalog.Open(ctx, tp.CreateFrom)
	if err != nil {
		return rendered
	}
	mt, ok := snap.Manifest.Table(tp.Schema, tp.Table)
	if !ok {
		return rendered
	}
	foot, err := snapshot.ReadFooter(snap.Path(mt.File))
	if err != nil {
		return rendered
	}
	same := reflect.DeepEqual(schemahist.StoredDef(foot.Table), schemahist.StoredDef(def))
	if tp.Def != nil {
		// Only its definition moved: the later snapshot's footer may keep
		// the columns' definition of before while its manifest holds the
		// CREATE TABLE after (createFrom saw no change of the table
		// between the moment and that snapshot).
		same = schema.SameShape(schemahist.StoredDef(foot.Table), schemahist.StoredDef(def))
	}
	if !same {
		return rendered
	}
	if mt.CreateTable != "" {
		return mt.CreateTable
	}
	if foot.CreateTable != "" {
		return foot.CreateTable
	}
	return rendered
}
