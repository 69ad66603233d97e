package sqlexport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/types"
)

// tableRows is one table to export: the footer of its table file (its
// definition and CREATE TABLE), what the table's comment line says about its
// rows, and each, which passes every row of the table in the SQL text form of
// snapshot.TableReader.Next (valid only during the call) to fn and returns
// fn's first error.
type tableRows struct {
	footer snapshot.FooterMeta
	note   string
	each   func(fn func(row []types.Cell) error) error
}

// fileRows is the table file r as it is, read to its end.
func fileRows(r *snapshot.TableReader) tableRows {
	f := r.Footer()
	return tableRows{
		footer: f,
		note:   fmt.Sprintf("%d rows, fingerprint %s", f.Rows, f.Fingerprint),
		each: func(fn func([]types.Cell) error) error {
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

// chainReader reads tables with a chain at their snapshot through one fold
// engine, opened at first use in a new scratch folder under dir
// (os.TempDir() when empty). Close closes the engine and removes the folder;
// it may be called more than once.
type chainReader struct {
	dir    string
	tmp    string
	engine *fold.Engine
}

// rows returns mt of snap at the snapshot (fold.Engine.Rows), after checking
// the digests of its table file and of every chain file against the manifest
// (fold.SnapshotTable: a *snapshot.DigestError refuses the table).
func (c *chainReader) rows(ctx context.Context, snap *snapshot.Snapshot, mt snapshot.ManifestTable) (tableRows, error) {
	name := mt.Schema + "." + mt.Table
	at, err := fold.SnapshotTable(snap, mt.Schema, mt.Table)
	if err != nil {
		return tableRows{}, fmt.Errorf("table %s: refused: %w", name, err)
	}
	foot, err := snapshot.ReadFooter(at.TableFile)
	if err != nil {
		return tableRows{}, fmt.Errorf("table %s: %w", name, err)
	}
	eng, err := c.open(ctx)
	if err != nil {
		return tableRows{}, fmt.Errorf("table %s: %w", name, err)
	}
	return tableRows{
		footer: foot,
		note: fmt.Sprintf("at the snapshot, from a table file of %d rows (fingerprint %s) and %d chain files",
			foot.Rows, foot.Fingerprint, len(mt.Chain)),
		each: func(fn func([]types.Cell) error) error { return eng.Rows(ctx, at, fn) },
	}, nil
}

// open returns the engine, opening it the first time.
func (c *chainReader) open(ctx context.Context) (*fold.Engine, error) {
	if c.engine != nil {
		return c.engine, nil
	}
	if c.dir != "" {
		if err := os.MkdirAll(c.dir, 0o700); err != nil {
			return nil, fmt.Errorf("export temp dir: %w", err)
		}
	}
	tmp, err := os.MkdirTemp(c.dir, "dbtrail-export-")
	if err != nil {
		return nil, fmt.Errorf("export temp dir: %w", err)
	}
	eng, err := fold.Open(ctx, fold.Options{TempDir: tmp, MemoryLimit: fold.DefaultMemoryLimit})
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	c.tmp, c.engine = tmp, eng
	return eng, nil
}

// Close closes the engine, if open, and removes its scratch folder.
func (c *chainReader) Close() error {
	if c.engine == nil {
		return nil
	}
	err := c.engine.Close()
	if rerr := os.RemoveAll(c.tmp); err == nil && rerr != nil {
		err = fmt.Errorf("export temp dir: %w", rerr)
	}
	c.engine, c.tmp = nil, ""
	return err
}
