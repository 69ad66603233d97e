package sqlexport

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// tableRows is one table to export: the footer of its table file (its
// definition and CREATE TABLE), what the table's comment line says about its
// rows, and each, which passes every row of the table in the SQL text form of
// snapshot.TableReader.Next (valid only during the call) to fn and returns
// fn's first error.
type tableRows struct {
	footer snapshot.FooterMeta
	note   string
	each   func(fn func(row []rowimage.Cell) error) error
}

// fileRows is the table file r as it is, read to its end.
func fileRows(r *snapshot.TableReader) tableRows {
	f := r.Footer()
	return tableRows{
		footer: f,
		note:   fmt.Sprintf("%d rows, fingerprint %s", f.Rows, f.Fingerprint),
		each: func(fn func([]rowimage.Cell) error) error {
			for {
				row, err := r.Next()
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
				if err := fn(row); err != nil {
					return err
				}
			}
		},
	}
}

// snapshotTable writes mt as it is at snap: from its table file alone when
// its chain holds no changes (EmptyChain), else through chains. A file whose
// digest differs from the manifest refuses the table before it is read.
func (e *exporter) snapshotTable(ctx context.Context, snap *snapshot.Snapshot, mt snapshot.ManifestTable, chains *chainReader) error {
	if !EmptyChain(mt) {
		src, err := chains.rows(ctx, snap, mt)
		if err != nil {
			return err
		}
		return e.table(src)
	}
	r, err := snap.OpenTable(mt.Schema, mt.Table)
	if err != nil {
		return fmt.Errorf("table %s.%s: refused: %w", mt.Schema, mt.Table, err)
	}
	defer r.Close()
	return e.table(fileRows(r))
}

// chainReader reads tables with a chain at their snapshot through the
// moment seam (moment.OpenSnapshotTable), with one fold engine opened at
// first use in a new scratch folder under dir (os.TempDir() when empty).
// Close closes the engine and removes the folder; it may be called more
// than once.
type chainReader struct {
	dir    string
	engine *fold.Engine
	done   func() error
}

// rows returns mt of snap at the snapshot, after checking the digests of
// its table file and of every chain file against the manifest (a
// *snapshot.DigestError refuses the table).
func (c *chainReader) rows(ctx context.Context, snap *snapshot.Snapshot, mt snapshot.ManifestTable) (tableRows, error) {
	name := mt.Schema + "." + mt.Table
	if c.engine == nil {
		eng, done, err := moment.OpenScratch(ctx, c.dir, "dbtrail-export-")
		if err != nil {
			return tableRows{}, fmt.Errorf("table %s: %w", name, err)
		}
		c.engine, c.done = eng, done
	}
	t, err := moment.OpenSnapshotTable(c.engine, snap, mt.Schema, mt.Table)
	if err != nil {
		return tableRows{}, fmt.Errorf("table %s: refused: %w", name, err)
	}
	foot := t.Footer
	return tableRows{
		footer: foot,
		note: fmt.Sprintf("at the snapshot, from a table file of %d rows (fingerprint %s) and %d chain files",
			foot.Rows, foot.Fingerprint, len(mt.Chain)),
		each: func(fn func([]rowimage.Cell) error) error { return t.Rows(ctx, fn) },
	}, nil
}

// Close closes the engine, if open, and removes its scratch folder.
func (c *chainReader) Close() error {
	if c.engine == nil {
		return nil
	}
	err := c.done()
	c.engine, c.done = nil, nil
	return err
}
