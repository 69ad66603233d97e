package compaction

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// table returns a delta table db.t whose chain has n pairs, and a manifest
// with a distinct digest for every file.
func table(n int) (snapshot.Manifest, snapshot.ManifestTable) {
	mt := snapshot.ManifestTable{Schema: "db", Table: "t", File: "db/t.parquet", Kind: snapshot.KindDelta}
	m := snapshot.Manifest{Files: map[string]digest.Digest{mt.File: {SHA256: "table", Size: 1}}}
	for i := range n {
		for _, suf := range []string{"posdel", "upserts"} {
			rel := "db/t." + foldplan.Entry(i, i) + "." + suf
			mt.Chain = append(mt.Chain, rel)
			m.Files[rel] = digest.Digest{SHA256: rel + "-sum", Size: 2}
		}
	}
	m.Tables = []snapshot.ManifestTable{mt}
	return m, mt
}

func TestRange(t *testing.T) {
	m, mt := table(3)
	cr, ok, err := Range(m, mt, mt.Chain[:4])
	if err != nil || !ok {
		t.Fatalf("Range of the first two pairs: ok %v, %v", ok, err)
	}
	if cr.From != 0 || cr.To != 1 || cr.TableFile != (foldplan.SourceFile{Path: "db/t.parquet", SHA256: "table"}) || len(cr.Merged) != 4 {
		t.Fatalf("range %+v", cr)
	}
	for i, f := range cr.Merged {
		if f.Path != mt.Chain[i] || f.SHA256 != mt.Chain[i]+"-sum" {
			t.Errorf("merged %d: %+v", i, f)
		}
	}
	if _, ok, err := Range(m, mt, mt.Chain[:2]); ok || err != nil {
		t.Errorf("one pair: ok %v, %v; want nothing to merge", ok, err)
	}
	full := mt
	full.Kind = snapshot.KindFull
	if _, ok, err := Range(m, full, mt.Chain[:4]); ok || err != nil {
		t.Errorf("full table: ok %v, %v; want nothing to merge", ok, err)
	}
	for name, merge := range map[string][]string{
		"not the start": mt.Chain[2:6],
		"odd":           mt.Chain[:5],
		"too long":      append(append([]string{}, mt.Chain...), "db/t.000003.posdel", "db/t.000003.upserts"),
	} {
		if _, _, err := Range(m, mt, merge); !errors.Is(err, ErrNotChainStart) {
			t.Errorf("%s: %v, want ErrNotChainStart", name, err)
		}
	}
	bad := mt
	bad.Chain = []string{"db/t.000001.posdel", "db/t.000001.upserts", "db/t.000002.posdel", "db/t.000002.upserts"}
	if _, _, err := Range(m, bad, bad.Chain); !errors.Is(err, ErrBrokenChain) {
		t.Errorf("chain from 000001: %v, want ErrBrokenChain", err)
	}
}

func TestSame(t *testing.T) {
	m, mt := table(2)
	a, _, _ := Range(m, mt, mt.Chain)
	b, _, _ := Range(m, mt, mt.Chain)
	if !Same(a, b) {
		t.Fatal("two ranges of the same files differ")
	}
	m.Files[mt.Chain[3]] = digest.Digest{SHA256: "other"}
	c, _, _ := Range(m, mt, mt.Chain)
	if Same(a, c) {
		t.Error("a merged file with another digest is the same range")
	}
	m.Files[mt.File] = digest.Digest{SHA256: "other table"}
	d, _, _ := Range(m, mt, mt.Chain)
	if Same(c, d) {
		t.Error("another table file is the same range")
	}
}

func TestDescriptors(t *testing.T) {
	f := snapshot.Folder(t.TempDir())
	m, mt := table(2)
	k := foldplan.TableKey{Schema: "db", Table: "t"}
	if _, err := Read(f, k); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Read without descriptor: %v", err)
	}
	cr, _, _ := Range(m, mt, mt.Chain)
	cr.Posdel, cr.Upserts = "db/t.000000-000001.posdel", "db/t.000000-000001.upserts"
	for _, rel := range []string{cr.Posdel, cr.Upserts} {
		p := f.Compact(rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Write(f, k, cr); err != nil {
		t.Fatal(err)
	}
	got, err := Read(f, k)
	if err != nil || !Same(got, cr) || got.Posdel != cr.Posdel {
		t.Fatalf("Read: %+v, %v", got, err)
	}
	all, err := ReadAll(f, m)
	if err != nil || len(all) != 1 || !Same(all[k], cr) {
		t.Fatalf("ReadAll: %v, %v", all, err)
	}
	if err := Drop(f, k); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{f.Compact("db", "t.json"), f.Compact(cr.Posdel), f.Compact(cr.Upserts)} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after Drop: %v", p, err)
		}
	}
	if err := Drop(f, k); err != nil {
		t.Errorf("Drop of a range already gone: %v", err)
	}
}

func TestDamagedDescriptorSkipped(t *testing.T) {
	f := snapshot.Folder(t.TempDir())
	m, _ := table(1)
	p := f.Compact("db", "t.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	all, err := ReadAll(f, m)
	if err != nil || len(all) != 0 {
		t.Errorf("ReadAll over a damaged descriptor: %v, %v; want none, no error", all, err)
	}
	if _, err := Read(f, foldplan.TableKey{Schema: "db", Table: "t"}); err == nil {
		t.Error("Read of a damaged descriptor succeeded")
	}
}

func TestRemoveFilesStaysInCompact(t *testing.T) {
	root := t.TempDir()
	f := snapshot.Folder(filepath.Join(root, "src"))
	outside := filepath.Join(root, "src", "keep")
	if err := os.MkdirAll(filepath.Dir(outside), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	RemoveFiles(f, "../keep", "", "/abs")
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("a name leaving .compact/ removed %s: %v", outside, err)
	}
}
