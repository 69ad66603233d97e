package verify

import (
	"context"
	"fmt"
	"os"

	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/sqlexport"
	"github.com/dbtrail/dbtrail/internal/types"
)

// side is the snapshot side of a comparison: one table as it is at the
// snapshot, its files' digests already checked. hash and fingerprint read it
// once; close releases it.
type side interface {
	table() *schema.Table
	// hash passes every row to h and returns the fingerprint.
	hash(ctx context.Context, h *hasher) (snapshot.Fingerprint, error)
	// fingerprint returns the fingerprint alone (when the live table's
	// shape differs and no row is compared).
	fingerprint(ctx context.Context) (snapshot.Fingerprint, error)
	close()
}

// openSide opens mt of snap: its table file when its chain holds no changes
// (sqlexport.EmptyChain), else the table file and its chain, read through a
// fold engine whose scratch folder is made under tempDir. Either way every
// file to be read is checked against its manifest digest first (a
// *snapshot.DigestError).
func openSide(snap *snapshot.Snapshot, mt snapshot.ManifestTable, tempDir string) (side, error) {
	if !sqlexport.EmptyChain(mt) {
		at, err := fold.SnapshotTable(snap, mt.Schema, mt.Table)
		if err != nil {
			return nil, err
		}
		return &chainSide{at: at, tempDir: tempDir}, nil
	}
	r, err := snap.OpenTable(mt.Schema, mt.Table)
	if err != nil {
		return nil, err
	}
	return fileSide{r}, nil
}

// fileSide is a table file that is the table at the snapshot. Its rows must
// give its footer's fingerprint (see SnapshotFingerprint).
type fileSide struct{ r *snapshot.TableReader }

func (s fileSide) table() *schema.Table { return s.r.Table() }

func (s fileSide) hash(_ context.Context, h *hasher) (snapshot.Fingerprint, error) {
	return readSnapshot(s.r, h)
}

func (s fileSide) fingerprint(context.Context) (snapshot.Fingerprint, error) {
	return s.r.Footer().Fingerprint, nil
}

func (s fileSide) close() { s.r.Close() }

// chainSide is a table file with a chain of changes, read at the snapshot
// with fold.Engine.Rows.
type chainSide struct {
	at      fold.TableAt
	tempDir string
}

func (s *chainSide) table() *schema.Table { return s.at.Table }

// hash opens a fold engine in a new scratch folder under s.tempDir
// (os.TempDir() when empty), streams the rows through h, and closes the
// engine and removes the folder.
func (s *chainSide) hash(ctx context.Context, h *hasher) (_ snapshot.Fingerprint, err error) {
	name := s.at.Table.QualifiedName()
	e, done, err := openEngine(ctx, s.tempDir)
	if err != nil {
		return h.fp, fmt.Errorf("table %s: %w", name, err)
	}
	defer func() {
		if derr := done(); err == nil && derr != nil {
			err = fmt.Errorf("table %s: %w", name, derr)
		}
	}()
	var addErr error // h's error, already naming the table and row
	err = e.Rows(ctx, s.at, func(row []types.Cell) error {
		if addErr = h.add(row); addErr != nil {
			addErr = fmt.Errorf("snapshot: %w", addErr)
		}
		return addErr
	})
	switch {
	case addErr != nil:
		return h.fp, addErr
	case err != nil:
		return h.fp, fmt.Errorf("table %s: snapshot after row %d: %w", name, h.rows, err)
	}
	return h.fp, nil
}

func (s *chainSide) fingerprint(ctx context.Context) (snapshot.Fingerprint, error) {
	return s.hash(ctx, newHasher(s.at.Table, nil, false))
}

func (s *chainSide) close() {}

// openEngine opens a fold engine in a new scratch folder under dir
// (os.TempDir() when empty; created if missing). done closes the engine and
// removes the folder.
func openEngine(ctx context.Context, dir string) (e *fold.Engine, done func() error, err error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, nil, fmt.Errorf("verify temp dir: %w", err)
		}
	}
	tmp, err := os.MkdirTemp(dir, "dbtrail-verify-")
	if err != nil {
		return nil, nil, fmt.Errorf("verify temp dir: %w", err)
	}
	e, err = fold.Open(ctx, fold.Options{TempDir: tmp, MemoryLimit: fold.DefaultMemoryLimit})
	if err != nil {
		os.RemoveAll(tmp)
		return nil, nil, err
	}
	return e, func() error {
		err := e.Close()
		if rerr := os.RemoveAll(tmp); err == nil && rerr != nil {
			err = fmt.Errorf("verify temp dir: %w", rerr)
		}
		return err
	}, nil
}
