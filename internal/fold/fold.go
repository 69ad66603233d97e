package fold

import (
	"context"
	"fmt"
	"io"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// progressEvery is how many rows pass between calls of a Progress function.
const progressEvery = 64 * 1024

// Progress is told, now and then, what a long operation has done: its stage
// and the rows written in that stage. It may heartbeat; it must be quick.
type Progress func(stage string, rows int64)

func (p Progress) tick(stage string, n int64) {
	if p != nil && n%progressEvery == 0 {
		p(stage, n)
	}
}

// PairResult describes a written delta pair.
type PairResult struct {
	PosdelRows  int64 // table file rows the window made stale
	UpsertRows  int64 // keys changed: newest versions and delete markers
	DeleteRows  int64 // of which delete markers
	PosdelBytes int64
	UpsertBytes int64
}

// WritePair writes the delta pair of window w against the table file tf:
// to posdel the ascending row numbers of the table file whose key changed
// in the window (found through tf's key map when the engine keeps them and
// tf has its digest, else by a DuckDB join with the table file's key
// columns), to upserts the newest effect of every changed key (bintrail_op u
// with the row, or d with the deleted row's last values) in stream order. meta is the upserts file's footer. What it writes grows
// with the keys changed in the window, never with the table or its chain.
func (e *Engine) WritePair(ctx context.Context, w *Window, tf TableFile, meta snapshot.FooterMeta,
	posdel, upserts io.Writer, progress Progress) (PairResult, error) {
	var res PairResult
	var err error
	if res.PosdelRows, res.PosdelBytes, err = e.writePosdel(posdel, progress, func(fn func(int64) error) error {
		if path := e.keyMapPath(tf); path != "" {
			return e.staleRowsByMap(ctx, tf, path, w, fn)
		}
		return e.staleRows(ctx, tf.Path, w, fn)
	}); err != nil {
		return PairResult{}, fmt.Errorf("fold %s: posdel: %w", w.Table.QualifiedName(), err)
	}
	uw, err := snapshot.NewUpsertsWriter(upserts, w.Table, meta, snapshot.WriterOptions{})
	if err != nil {
		return PairResult{}, err
	}
	if err := e.copyNewest(ctx, []Keyed{w.File}, true, progress, func(row []rowimage.Cell, key, op string) error {
		if op == snapshot.OpDelete {
			res.DeleteRows++
		}
		return uw.AppendSQL(row, key, op)
	}); err != nil {
		return PairResult{}, fmt.Errorf("fold %s: upserts: %w", w.Table.QualifiedName(), err)
	}
	wr, err := uw.Close()
	if err != nil {
		return PairResult{}, fmt.Errorf("fold %s: upserts: %w", w.Table.QualifiedName(), err)
	}
	res.UpsertRows, res.UpsertBytes = wr.Rows, wr.Bytes
	return res, nil
}

// writeStale writes the row numbers rows yields as a scratch .posdel file.
func (e *Engine) writeStale(path string, rows func(func(int64) error) error) error {
	return writeScratch(path, func(w io.Writer) error {
		_, _, err := e.writePosdel(w, nil, rows)
		return err
	})
}

// writePosdel writes the row numbers rows yields as a .posdel file.
func (e *Engine) writePosdel(out io.Writer, progress Progress, rows func(func(int64) error) error) (n, size int64, err error) {
	pw, err := snapshot.NewPosdelWriter(out)
	if err != nil {
		return 0, 0, err
	}
	if err := rows(func(r int64) error {
		progress.tick("posdel", pw.Rows()+1)
		return pw.Append(r)
	}); err != nil {
		return 0, 0, err
	}
	size, err = pw.Close()
	return pw.Rows(), size, err
}

// copyNewest streams the newest row of every key across files (see
// newestRows) to fn, in file then row order.
func (e *Engine) copyNewest(ctx context.Context, files []Keyed, keepDeletes bool, progress Progress,
	fn func(row []rowimage.Cell, key, op string) error) error {
	c := newCopier(files)
	defer c.Close()
	var n int64
	err := e.newestRows(ctx, files, keepDeletes, func(file int, row int64) error {
		vals, key, op, err := c.row(file, row)
		if err != nil {
			return err
		}
		n++
		progress.tick("upserts", n)
		return fn(vals, key, op)
	})
	if err != nil {
		return err
	}
	return c.Close()
}

// RewriteInput is a table to fold into a new table file.
type RewriteInput struct {
	Table     *schema.Table
	TableFile string   // the previous table file
	Posdel    []string // its chain's .posdel files, in chain order
	Upserts   []Keyed  // its chain's .upserts files, in chain order
	Window    *Window  // the changes since the chain's last entry; nil for none
	// Meta is the new table file's footer (CreateTable, Position,
	// SnapshotID, Source).
	Meta snapshot.FooterMeta
}

// Rewrite writes the table as of the window's end as a new table file to
// out: the previous table file's rows that no .posdel (nor the window)
// names, in file order, then the newest version of every key across the
// chain's .upserts and the window, unless it is a delete. The result's
// fingerprint is over exactly those rows, so it equals a full backup's at
// the same position.
func (e *Engine) Rewrite(ctx context.Context, in RewriteInput, out io.Writer, progress Progress) (snapshot.WriteResult, error) {
	name := in.Table.QualifiedName()
	// Overlap: the Parquet encoding of one row group runs beside the fold
	// of the next (two cores for one table).
	tw, err := snapshot.NewTableWriter(out, in.Table, in.Meta, snapshot.WriterOptions{Overlap: true})
	if err != nil {
		return snapshot.WriteResult{}, err
	}
	defer tw.Abort() // ends the overlap on a failure; nothing after Close
	if in.Table.KeyKind == schema.KeyRow {
		if err := e.rewriteMultiset(ctx, in, tw, progress); err != nil {
			return snapshot.WriteResult{}, fmt.Errorf("fold %s: rewrite: %w", name, err)
		}
		return tw.Close()
	}
	posdel := append([]string(nil), in.Posdel...)
	upserts := append([]Keyed(nil), in.Upserts...)
	if in.Window != nil {
		stale := in.Window.File.Path + ".posdel"
		if err := e.writeStale(stale, func(fn func(int64) error) error {
			return e.staleRows(ctx, in.TableFile, in.Window, fn)
		}); err != nil {
			return snapshot.WriteResult{}, fmt.Errorf("fold %s: rewrite: window posdel: %w", name, err)
		}
		defer removeQuiet(stale)
		posdel = append(posdel, stale)
		upserts = append(upserts, in.Window.File)
	}
	if err := e.copyLive(ctx, in.TableFile, posdel, tw, progress); err != nil {
		return snapshot.WriteResult{}, fmt.Errorf("fold %s: rewrite: %w", name, err)
	}
	if err := e.copyNewest(ctx, upserts, false, progress, func(row []rowimage.Cell, _, _ string) error {
		return tw.AppendSQL(row)
	}); err != nil {
		return snapshot.WriteResult{}, fmt.Errorf("fold %s: rewrite: upserts: %w", name, err)
	}
	return tw.Close()
}

// copyLive appends to tw every row of the table file that no posdel names.
func (e *Engine) copyLive(ctx context.Context, tableFile string, posdel []string, tw *snapshot.TableWriter, progress Progress) error {
	return e.liveRows(ctx, tableFile, posdel, func(row []rowimage.Cell) error {
		if err := tw.AppendSQL(row); err != nil {
			return err
		}
		progress.tick("table", tw.Rows())
		return nil
	})
}

// liveRows calls fn with every row of the table file that no posdel names,
// in file order.
func (e *Engine) liveRows(ctx context.Context, tableFile string, posdel []string, fn func([]rowimage.Cell) error) error {
	return e.liveRowsFrom(ctx, tableFile, posdel, false, fn)
}

// liveRowsFrom is liveRows; ahead decodes the table file's next rows on
// another goroutine while fn works (readAhead).
func (e *Engine) liveRowsFrom(ctx context.Context, tableFile string, posdel []string, ahead bool, fn func([]rowimage.Cell) error) error {
	tf, err := snapshot.OpenTableFile(tableFile)
	if err != nil {
		return err
	}
	defer tf.Close()
	var r rowSource = tf
	if ahead {
		ra := newReadAhead(tf, len(tf.Table().Columns))
		defer ra.Close()
		r = ra
	}
	const end = int64(1) << 62
	var at int64 // rows of r read
	// upTo reads the rows before limit; a limit other than end is a dead
	// row, read and dropped.
	upTo := func(limit int64) error {
		for at < limit {
			row, err := r.Next()
			if err == io.EOF {
				if limit == end {
					return nil
				}
				return fmt.Errorf("a posdel names row %d; the table file has %d rows", limit-1, at)
			}
			if err != nil {
				return err
			}
			at++
			if limit != end && at == limit {
				return nil // the dead row itself
			}
			if err := fn(row); err != nil {
				return err
			}
		}
		return nil
	}
	if err := e.deadRows(ctx, posdel, func(dead int64) error { return upTo(dead + 1) }); err != nil {
		return err
	}
	return upTo(end)
}

// CompactResult describes a written range pair.
type CompactResult struct {
	PosdelRows, UpsertRows   int64
	PosdelBytes, UpsertBytes int64
}

// Compact merges chain entries into one range pair: to posdel every row
// number the .posdel files name, once, ascending; to upserts the newest
// version of every key across the .upserts files, delete markers included
// (a later entry may still need to hide an older one). meta is the upserts
// file's footer. The table file is not read.
func (e *Engine) Compact(ctx context.Context, t *schema.Table, posdel []string, upserts []Keyed, meta snapshot.FooterMeta,
	posdelOut, upsertsOut io.Writer, progress Progress) (CompactResult, error) {
	var res CompactResult
	var err error
	if res.PosdelRows, res.PosdelBytes, err = e.writePosdel(posdelOut, progress, func(fn func(int64) error) error {
		return e.deadRows(ctx, posdel, fn)
	}); err != nil {
		return CompactResult{}, fmt.Errorf("compact %s: posdel: %w", t.QualifiedName(), err)
	}
	uw, err := snapshot.NewUpsertsWriter(upsertsOut, t, meta, snapshot.WriterOptions{})
	if err != nil {
		return CompactResult{}, err
	}
	if err := e.copyNewest(ctx, upserts, true, progress, func(row []rowimage.Cell, key, op string) error {
		return uw.AppendSQL(row, key, op)
	}); err != nil {
		return CompactResult{}, fmt.Errorf("compact %s: upserts: %w", t.QualifiedName(), err)
	}
	wr, err := uw.Close()
	if err != nil {
		return CompactResult{}, fmt.Errorf("compact %s: upserts: %w", t.QualifiedName(), err)
	}
	res.UpsertRows, res.UpsertBytes = wr.Rows, wr.Bytes
	return res, nil
}
