package verify

import (
	"context"
	"fmt"

	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/sqlexport"
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
		// Every file's digest is checked before the live side is read.
		at, err := fold.SnapshotTable(snap, mt.Schema, mt.Table)
		if err != nil {
			return nil, err
		}
		return &chainSide{snap: snap, at: at, tempDir: tempDir}, nil
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
// through the moment seam (moment.OpenSnapshotTable).
type chainSide struct {
	snap    *snapshot.Snapshot
	at      fold.TableAt // its files' digests checked
	tempDir string
}

func (s *chainSide) table() *schema.Table { return s.at.Table }

// hash opens a fold engine in a new scratch folder under s.tempDir
// (os.TempDir() when empty), streams the rows through h, and closes the
// engine and removes the folder.
func (s *chainSide) hash(ctx context.Context, h *hasher) (_ snapshot.Fingerprint, err error) {
	name := s.at.Table.QualifiedName()
	e, done, err := moment.OpenScratch(ctx, s.tempDir, "dbtrail-verify-")
	if err != nil {
		return h.fp, fmt.Errorf("table %s: %w", name, err)
	}
	defer func() {
		if derr := done(); err == nil && derr != nil {
			err = fmt.Errorf("table %s: %w", name, derr)
		}
	}()
	t, err := moment.CheckedTable(e, s.snap, s.at)
	if err != nil {
		return h.fp, fmt.Errorf("table %s: %w", name, err)
	}
	return hashRows(ctx, t, h)
}

func (s *chainSide) fingerprint(ctx context.Context) (snapshot.Fingerprint, error) {
	return s.hash(ctx, newHasher(s.at.Table, nil, false))
}

func (s *chainSide) close() {}

// hashRows streams the rows of t through h.
func hashRows(ctx context.Context, t *moment.Table, h *hasher) (snapshot.Fingerprint, error) {
	var addErr error // h's error, already naming the table and row
	err := t.Rows(ctx, func(row []rowimage.Cell) error {
		if addErr = h.add(row); addErr != nil {
			addErr = fmt.Errorf("snapshot: %w", addErr)
		}
		return addErr
	})
	switch {
	case addErr != nil:
		return h.fp, addErr
	case err != nil:
		return h.fp, fmt.Errorf("table %s: snapshot after row %d: %w", t.Name(), h.rows, err)
	}
	return h.fp, nil
}

// momentSide is a table rebuilt at a moment, opened by the caller.
type momentSide struct{ t *moment.Table }

func (s momentSide) table() *schema.Table { return s.t.Footer.Table }

func (s momentSide) hash(ctx context.Context, h *hasher) (snapshot.Fingerprint, error) {
	return hashRows(ctx, s.t, h)
}

func (s momentSide) fingerprint(ctx context.Context) (snapshot.Fingerprint, error) {
	return hashRows(ctx, s.t, newHasher(s.t.Footer.Table, nil, false))
}

func (s momentSide) close() {}
