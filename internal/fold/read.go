package fold

import (
	"context"
	"fmt"
	"strings"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// TableAt is a table as a snapshot holds it: its table file and chain.
type TableAt struct {
	Table     *schema.Table
	TableFile string
	Posdel    []string
	Upserts   []Keyed
}

// SnapshotTable returns schema.table of snap as a TableAt, after checking
// the digest of its table file and every chain file against the manifest
// (a *snapshot.DigestError refuses it) and reading the table file's footer
// for its definition. Its chain is every chain file the manifest lists,
// the empty 000000 pair included (WithoutEmptyChain drops empty ones).
func SnapshotTable(snap *snapshot.Snapshot, schemaName, table string) (TableAt, error) {
	mt, ok := snap.Manifest.Table(schemaName, table)
	if !ok {
		return TableAt{}, fmt.Errorf("snapshot %s: no table %s.%s", snap.Manifest.SnapshotID, schemaName, table)
	}
	for _, rel := range append([]string{mt.File}, mt.Chain...) {
		if err := snap.Verify(rel); err != nil {
			return TableAt{}, err
		}
	}
	foot, err := snapshot.ReadFooter(snap.Path(mt.File))
	if err != nil {
		return TableAt{}, err
	}
	if foot.Fingerprint != mt.Fingerprint || foot.Rows != mt.Rows {
		return TableAt{}, fmt.Errorf("snapshot %s: table %s.%s: footer fingerprint %s, manifest says %s",
			snap.Manifest.SnapshotID, schemaName, table, foot.Fingerprint, mt.Fingerprint)
	}
	at := TableAt{Table: foot.Table, TableFile: snap.Path(mt.File)}
	for _, rel := range mt.Chain {
		switch {
		case strings.HasSuffix(rel, ".posdel"):
			at.Posdel = append(at.Posdel, snap.Path(rel))
		case strings.HasSuffix(rel, ".upserts"):
			at.Upserts = append(at.Upserts, Upserts(snap.Path(rel)))
		default:
			return TableAt{}, fmt.Errorf("snapshot %s: table %s.%s: chain file %s is neither .posdel nor .upserts", snap.Manifest.SnapshotID, schemaName, table, rel)
		}
	}
	return at, nil
}

// WithoutEmptyChain is at without the chain files that hold no rows (the
// empty chain start every new table file gets, read from each file's
// Parquet footer): reading them adds nothing, and a table whose chain is
// all empty reads as its table file alone, so that a schema change can map
// its rows straight from it.
func (at TableAt) WithoutEmptyChain() (TableAt, error) {
	out := at
	out.Posdel, out.Upserts = nil, nil
	for _, p := range at.Posdel {
		empty, err := emptyFile(p)
		if err != nil {
			return TableAt{}, err
		}
		if !empty {
			out.Posdel = append(out.Posdel, p)
		}
	}
	for _, k := range at.Upserts {
		empty, err := emptyFile(k.Path)
		if err != nil {
			return TableAt{}, err
		}
		if !empty {
			out.Upserts = append(out.Upserts, k)
		}
	}
	return out, nil
}

// emptyFile reports whether the Parquet file at path holds no rows.
func emptyFile(path string) (bool, error) {
	st, err := snapshot.ReadFileStats(path)
	if err != nil {
		return false, err
	}
	return st.Rows == 0, nil
}

// Rows calls fn with every row of the table at its snapshot, in the SQL
// text form of snapshot.TableReader.Next (valid only during the call): the
// table file's rows no .posdel names, in file order, then the newest version
// of every key across the .upserts files unless it is a delete. It is what
// the DuckDB views read, streamed with bounded memory.
func (e *Engine) Rows(ctx context.Context, at TableAt, fn func(row []rowimage.Cell) error) error {
	if err := e.liveRows(ctx, at.TableFile, at.Posdel, fn); err != nil {
		return fmt.Errorf("read %s: %w", at.Table.QualifiedName(), err)
	}
	if err := e.copyNewest(ctx, at.Upserts, false, nil, func(row []rowimage.Cell, _, _ string) error { return fn(row) }); err != nil {
		return fmt.Errorf("read %s: upserts: %w", at.Table.QualifiedName(), err)
	}
	return nil
}
