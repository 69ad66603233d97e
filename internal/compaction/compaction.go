// Package compaction owns the compacted ranges of a source folder
// (.compact/): which chain entries a range merges (Range, checked against the
// snapshot's chain), the range's descriptor (.compact/<schema>/<table>.json:
// Read, ReadAll, Write, Drop) and the removal of a replaced range's files.
// The merge itself is fold's (Engine.Compact); the activity CompactTable
// adapts this package to Temporal.
package compaction

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/dbtrail/dbtrail/internal/atomicfile"
	"github.com/dbtrail/dbtrail/internal/filemode"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// ErrNotChainStart is Range's error when the entries to merge are not the
// first entries of the table's chain: the plan and the snapshot disagree.
var ErrNotChainStart = errors.New("the entries to merge are not the start of the chain")

// ErrBrokenChain is Range's error when the table's chain does not start at
// entry 000000: the snapshot is damaged.
var ErrBrokenChain = errors.New("the chain does not start at 000000")

// Range returns the range that merges the chain entries merge (posdel,
// upserts of each entry, in chain order) of table mt in manifest m, with the
// digests of the table file and the merged files from m; ok is false when
// there is nothing to merge (no such delta table, fewer than two entries).
// merge must be the start of mt's chain (ErrNotChainStart) and the chain
// must start at 000000 (ErrBrokenChain). The range's own files (Posdel,
// Upserts and their digests) are filled when it is written.
func Range(m snapshot.Manifest, mt snapshot.ManifestTable, merge []string) (cr foldplan.CompactedRange, ok bool, err error) {
	k := foldplan.TableKey{Schema: mt.Schema, Table: mt.Table}
	if mt.Kind != snapshot.KindDelta || len(merge) < 4 {
		return cr, false, nil
	}
	if len(merge)%2 != 0 || len(merge) > len(mt.Chain) || !slices.Equal(merge, mt.Chain[:len(merge)]) {
		return cr, false, fmt.Errorf("compact %s: the plan merges %v, the chain starts otherwise (%v): %w", k, merge, mt.Chain, ErrNotChainStart)
	}
	from, _, _, ok1 := foldplan.ParseChainEntry(merge[0])
	_, to, _, ok2 := foldplan.ParseChainEntry(merge[len(merge)-1])
	if !ok1 || !ok2 || from != 0 {
		return cr, false, fmt.Errorf("compact %s: chain %v: %w", k, merge, ErrBrokenChain)
	}
	cr = foldplan.CompactedRange{From: from, To: to,
		TableFile: foldplan.SourceFile{Path: mt.File, SHA256: m.Files[mt.File].SHA256}}
	for _, rel := range merge {
		cr.Merged = append(cr.Merged, foldplan.SourceFile{Path: rel, SHA256: m.Files[rel].SHA256})
	}
	return cr, true, nil
}

// Same reports whether a written range old merged exactly the files of cr
// (same entries, same table file, same merged files and digests).
func Same(old, cr foldplan.CompactedRange) bool {
	return old.From == cr.From && old.To == cr.To && old.TableFile == cr.TableFile && slices.Equal(old.Merged, cr.Merged)
}

// descPath is the descriptor of table k's range in folder f.
func descPath(f snapshot.Folder, k foldplan.TableKey) string {
	return f.Compact(k.Schema, k.Table+".json")
}

// Read returns the descriptor of table k's range in folder f; an error
// wrapping os.ErrNotExist when there is none.
func Read(f snapshot.Folder, k foldplan.TableKey) (foldplan.CompactedRange, error) {
	var cr foldplan.CompactedRange
	b, err := os.ReadFile(descPath(f, k))
	if err != nil {
		return cr, err
	}
	if err := json.Unmarshal(b, &cr); err != nil {
		return cr, fmt.Errorf("compacted range of %s: %w", k, err)
	}
	return cr, nil
}

// ReadAll returns the waiting ranges of the tables of m in folder f. A
// table without a descriptor has none; a damaged descriptor is skipped (it
// only loses a compaction: the plan links the plain pairs).
func ReadAll(f snapshot.Folder, m snapshot.Manifest) (map[foldplan.TableKey]foldplan.CompactedRange, error) {
	out := map[foldplan.TableKey]foldplan.CompactedRange{}
	for _, t := range m.Tables {
		k := foldplan.TableKey{Schema: t.Schema, Table: t.Table}
		b, err := os.ReadFile(descPath(f, k))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read compacted range of %s: %w", k, err)
		}
		var cr foldplan.CompactedRange
		if json.Unmarshal(b, &cr) != nil {
			continue
		}
		out[k] = cr
	}
	return out, nil
}

// Write writes the descriptor of table k's range crash-safely: the last
// step of writing a range, after its files.
func Write(f snapshot.Folder, k foldplan.TableKey, cr foldplan.CompactedRange) error {
	desc, err := json.MarshalIndent(cr, "", "  ")
	if err != nil {
		return fmt.Errorf("compacted range of %s: %w", k, err)
	}
	path := descPath(f, k)
	if err := os.MkdirAll(filepath.Dir(path), filemode.Dir()); err != nil {
		return err
	}
	return atomicfile.Write(path, filemode.File(), func(w io.Writer) error {
		_, err := w.Write(desc)
		return err
	})
}

// Forget removes the descriptor of table k's range (the range is no longer
// used; its files stay until RemoveFiles). None is success.
func Forget(f snapshot.Folder, k foldplan.TableKey) error {
	if err := os.Remove(descPath(f, k)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("forget compacted range of %s: %w", k, err)
	}
	return nil
}

// Drop forgets table k's range and removes its files.
func Drop(f snapshot.Folder, k foldplan.TableKey) error {
	cr, readErr := Read(f, k)
	if err := Forget(f, k); err != nil {
		return err
	}
	if readErr == nil {
		RemoveFiles(f, cr.Posdel, cr.Upserts)
	}
	return nil
}

// RemoveFiles removes range files named by a descriptor (relative to
// .compact/); an empty name, or one that leaves .compact/, is ignored, and
// so is a file already gone.
func RemoveFiles(f snapshot.Folder, rels ...string) {
	for _, rel := range rels {
		if rel == "" || !filepath.IsLocal(filepath.FromSlash(rel)) {
			continue
		}
		os.Remove(f.Compact(filepath.FromSlash(rel)))
	}
}
