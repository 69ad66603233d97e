package fold

import (
	"context"
	"fmt"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// RowsAt calls fn with every row of the table at its snapshot (at) with
// the changes of w applied after its chain (w nil: Rows), in the SQL text
// form of snapshot.TableReader.Next (valid only during the call): exactly
// the rows Rewrite writes for the same table file, chain and window, in the
// same order, without writing a table file. A table keyed by all its
// columns (whose chain must hold no changes) gets the window's net copies.
// Memory is bounded as in Rewrite: DuckDB decides which rows, spilling to
// the engine's folder.
// The table file's next rows are decoded on another goroutine while fn
// works on these (readAhead: three blocks of 4,096 rows at most).
func (e *Engine) RowsAt(ctx context.Context, at TableAt, w *Window, fn func(row []rowimage.Cell) error) error {
	if w == nil {
		return e.Rows(ctx, at, fn)
	}
	name := at.Table.QualifiedName()
	stale := w.File.Path + ".posdel"
	defer removeQuiet(stale)
	if at.Table.KeyKind == schema.KeyRow {
		in := RewriteInput{Table: at.Table, TableFile: at.TableFile, Posdel: at.Posdel, Upserts: at.Upserts, Window: w}
		if err := e.requireEmptyChain(ctx, in); err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		if err := e.writeStale(stale, func(fn func(int64) error) error {
			return e.removedCopies(ctx, at.TableFile, w, fn)
		}); err != nil {
			return fmt.Errorf("read %s: window: %w", name, err)
		}
		if err := e.liveRowsFrom(ctx, at.TableFile, []string{stale}, true, fn); err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		if err := e.addedCopies(ctx, w, fn); err != nil {
			return fmt.Errorf("read %s: window: %w", name, err)
		}
		return nil
	}
	if err := e.writeStale(stale, func(fn func(int64) error) error {
		return e.staleRows(ctx, at.TableFile, w, fn)
	}); err != nil {
		return fmt.Errorf("read %s: window posdel: %w", name, err)
	}
	posdel := append(append([]string(nil), at.Posdel...), stale)
	if err := e.liveRowsFrom(ctx, at.TableFile, posdel, true, fn); err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	upserts := append(append([]Keyed(nil), at.Upserts...), w.File)
	if err := e.copyNewest(ctx, upserts, false, nil, func(row []rowimage.Cell, _, _ string) error { return fn(row) }); err != nil {
		return fmt.Errorf("read %s: upserts: %w", name, err)
	}
	return nil
}
