package snapshot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/rowimage"
)

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// build stages snapshot id with the all-types table (rows) and its empty
// chain start, and returns the builder and the manifest to publish.
func build(t *testing.T, dir, id string, seq uint64, rows [][][]byte) (*Builder, Manifest) {
	t.Helper()
	b, err := NewBuilder(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	tbl := allTypes()
	rel, err := TableFile(tbl.Schema, tbl.Name)
	if err != nil {
		t.Fatal(err)
	}
	var res WriteResult
	_, err = b.WriteFile(rel, func(w io.Writer) error {
		meta := testMeta()
		meta.SnapshotID, meta.Position.Seq = id, seq
		tw, err := NewTableWriter(w, tbl, meta, WriterOptions{})
		if err != nil {
			return err
		}
		for _, r := range rows {
			if err := tw.AppendSQL(rowimage.RawCells(nil, r)); err != nil {
				return err
			}
		}
		res, err = tw.Close()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	chain, err := WriteEmptyChainStart(b, tbl)
	if err != nil {
		t.Fatal(err)
	}
	return b, Manifest{
		Source:   "src1",
		Position: binlogpos.Position{File: "mysql-bin.000042", Pos: 1234, Seq: seq},
		Tables: []ManifestTable{{Schema: tbl.Schema, Table: tbl.Name, File: rel, Rows: res.Rows,
			Fingerprint: res.Fingerprint, Chain: chain, Kind: KindDelta}},
	}
}

// checkCurrent asserts that current is absent or names a complete snapshot
// whose files all verify and whose table reads, and returns its id.
func checkCurrent(t *testing.T, dir string) string {
	t.Helper()
	id, err := ResolveCurrent(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenCurrent(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.VerifyAll(); err != nil {
		t.Fatal(err)
	}
	r, err := s.OpenTable("db1", "all_types")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := readAll(t, r); int64(len(got)) != s.Manifest.Tables[0].Rows {
		t.Fatalf("snapshot %s: read %d rows", id, len(got))
	}
	return id
}

func TestPublishAndRead(t *testing.T) {
	dir := t.TempDir()
	rows, _ := allTypesRows()
	b, m := build(t, dir, "20261129T061500Z", 10, rows)
	// A staged snapshot is invisible.
	if ids, _ := ListSnapshots(dir); len(ids) != 0 || checkCurrent(t, dir) != "" {
		t.Fatalf("staging visible: %v", ids)
	}
	if _, err := OpenSnapshot(b.Dir()); err == nil {
		t.Fatal("staging folder without manifest opened")
	}
	if err := b.Publish(m); err != nil {
		t.Fatal(err)
	}
	if id := checkCurrent(t, dir); id != "20261129T061500Z" {
		t.Fatalf("current %q", id)
	}
	s, err := OpenCurrent(dir)
	if err != nil {
		t.Fatal(err)
	}
	mt := s.Manifest.Tables[0]
	if len(mt.Chain) != 2 || mt.Chain[0] != "db1/all_types.000000.posdel" || mt.Chain[1] != "db1/all_types.000000.upserts" ||
		len(s.Manifest.Files) != 3 || s.Manifest.CreatedAt != mustTime(t, "2026-11-29T06:15:00Z") || s.Manifest.Version != 1 {
		t.Fatalf("manifest %+v", s.Manifest)
	}
	if _, err := os.Stat(b.Dir()); !os.IsNotExist(err) {
		t.Fatalf("staging folder left: %v", err)
	}
	// Publishing again with the same manifest is a no-op; with another, an error.
	b2, m2 := build(t, dir, "20261129T061500Z", 10, rows)
	if err := b2.Publish(m2); err != nil {
		t.Fatalf("idempotent publish: %v", err)
	}
	b3, m3 := build(t, dir, "20261129T061500Z", 11, rows)
	if err := b3.Publish(m3); err == nil {
		t.Fatal("republish with a different manifest accepted")
	}
	if checkCurrent(t, dir) != "20261129T061500Z" {
		t.Fatal("current moved")
	}
}

func TestPublishCrashAtEveryStep(t *testing.T) {
	rows, _ := allTypesRows()
	steps := []string{"synced", "manifest-temp", "manifest", "renamed", "current-temp", "current"}
	for _, step := range steps {
		t.Run(step, func(t *testing.T) {
			dir := t.TempDir()
			a, ma := build(t, dir, "20261129T061500Z", 10, rows)
			if err := a.Publish(ma); err != nil {
				t.Fatal(err)
			}
			crash := errors.New("simulated crash")
			var seen []string
			crashPoint = func(s string) error {
				seen = append(seen, s)
				if s == step {
					return crash
				}
				// Between any two steps, current names a complete snapshot.
				checkCurrent(t, dir)
				return nil
			}
			defer func() { crashPoint = func(string) error { return nil } }()
			b, mb := build(t, dir, "20261129T062000Z", 20, rows[:2])
			if err := b.Publish(mb); !errors.Is(err, crash) {
				t.Fatalf("publish: %v (steps %v)", err, seen)
			}
			crashPoint = func(string) error { return nil }
			cur := checkCurrent(t, dir)
			if cur != "20261129T061500Z" && cur != "20261129T062000Z" {
				t.Fatalf("after crash at %s current is %q", step, cur)
			}
			ids, err := ListSnapshots(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids { // every listed snapshot is complete
				s, err := OpenSnapshot(Folder(dir).Snapshot(id))
				if err != nil {
					t.Fatal(err)
				}
				if err := s.VerifyAll(); err != nil {
					t.Fatal(err)
				}
			}
			// A rerun that only re-attaches (the files were written by other
			// activities) and adopts the digests finishes the publish too.
			if step == "renamed" || step == "current-temp" {
				at, err := AttachBuilder(dir, "20261129T062000Z")
				if err != nil {
					t.Fatal(err)
				}
				for rel, d := range b.Files() {
					if err := at.Adopt(rel, d); err != nil {
						t.Fatal(err)
					}
				}
				if err := at.Publish(mb); err != nil {
					t.Fatalf("attached rerun after crash at %s: %v", step, err)
				}
				if cur := checkCurrent(t, dir); cur != "20261129T062000Z" {
					t.Fatalf("attached rerun: current %q", cur)
				}
			}
			// The rerun (same id, same content) finishes the publish, twice.
			for range 2 {
				b, mb = build(t, dir, "20261129T062000Z", 20, rows[:2])
				if err := b.Publish(mb); err != nil {
					t.Fatalf("rerun after crash at %s: %v", step, err)
				}
				if cur := checkCurrent(t, dir); cur != "20261129T062000Z" {
					t.Fatalf("rerun: current %q", cur)
				}
			}
			if ents, _ := os.ReadDir(Folder(dir).Staging()); len(ents) != 0 {
				t.Fatalf("staging left: %v", ents)
			}
			if ids, _ := ListSnapshots(dir); fmt.Sprint(ids) != "[20261129T061500Z 20261129T062000Z]" {
				t.Fatalf("snapshots %v", ids)
			}
		})
	}
}

// publishedAllTypes publishes snapshot 20261129T061500Z (build, seq 10)
// in a new folder and opens it.
func publishedAllTypes(t *testing.T) *Snapshot {
	t.Helper()
	dir := t.TempDir()
	rows, _ := allTypesRows()
	b, m := build(t, dir, "20261129T061500Z", 10, rows)
	if err := b.Publish(m); err != nil {
		t.Fatal(err)
	}
	s, err := OpenCurrent(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDigestRefusesAlteredFile(t *testing.T) {
	s := publishedAllTypes(t)
	rel := s.Manifest.Tables[0].File
	want := s.Manifest.Files[rel]
	p := s.Path(rel)
	data, _ := os.ReadFile(p)
	// Same size, one byte altered.
	data[len(data)/2] ^= 1
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var de *DigestError
	if _, err := s.OpenTable("db1", "all_types"); !errors.As(err, &de) || de.File != rel || de.WantSHA256 != want.SHA256 || de.GotSHA256 == want.SHA256 {
		t.Fatalf("altered file: %v", err)
	}
	// Truncated.
	if err := os.Truncate(p, want.Size-10); err != nil {
		t.Fatal(err)
	}
	err := s.Verify(rel)
	if !errors.As(err, &de) || de.WantSize != want.Size || de.GotSize != want.Size-10 {
		t.Fatalf("truncated file: %v", err)
	}
	if _, err := s.OpenTable("db1", "all_types"); !errors.As(err, &de) {
		t.Fatalf("truncated file opened: %v", err)
	}
	if err := s.Verify("db1/nope.parquet"); err == nil {
		t.Fatal("file outside the manifest verified")
	}
}

func TestLinkReusesDigestWithoutReading(t *testing.T) {
	dir := t.TempDir()
	rows, _ := allTypesRows()
	a, ma := build(t, dir, "20261129T061500Z", 10, rows)
	if err := a.Publish(ma); err != nil {
		t.Fatal(err)
	}
	sa, err := OpenCurrent(dir)
	if err != nil {
		t.Fatal(err)
	}
	mt := sa.Manifest.Tables[0]
	fileHashes.Lock()
	before := fileHashes.n
	fileHashes.Unlock()
	b, err := NewBuilder(dir, "20261129T062000Z")
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range append([]string{mt.File}, mt.Chain...) {
		if err := b.Link(rel, sa.Path(rel), sa.Manifest.Files[rel]); err != nil {
			t.Fatal(err)
		}
	}
	bad := sa.Manifest.Files[mt.File]
	bad.Size++
	if err := b.Link("x/y.parquet", sa.Path(mt.File), bad); err == nil {
		t.Fatal("link with a wrong size accepted")
	}
	mb := sa.Manifest
	mb.SnapshotID, mb.CreatedAt, mb.Files = "", time.Time{}, nil
	if err := b.Publish(mb); err != nil {
		t.Fatal(err)
	}
	fileHashes.Lock()
	after := fileHashes.n
	fileHashes.Unlock()
	if after != before {
		t.Fatalf("linking and publishing hashed %d files", after-before)
	}
	sb, err := OpenCurrent(dir)
	if err != nil {
		t.Fatal(err)
	}
	for rel, d := range sa.Manifest.Files {
		if sb.Manifest.Files[rel] != d {
			t.Errorf("%s: digest %v, was %v", rel, sb.Manifest.Files[rel], d)
		}
		sta, _ := os.Stat(sa.Path(rel))
		stb, _ := os.Stat(sb.Path(rel))
		if !os.SameFile(sta, stb) {
			t.Errorf("%s is not a hard link", rel)
		}
	}
	// Corrupt the shared file: B kept A's digest (it never re-read), so B refuses it.
	p := sa.Path(mt.File)
	data, _ := os.ReadFile(p)
	data[10] ^= 0xff
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var de *DigestError
	if err := sb.Verify(mt.File); !errors.As(err, &de) || de.WantSHA256 != sa.Manifest.Files[mt.File].SHA256 {
		t.Fatalf("corrupted linked file: %v", err)
	}
}

// TestSnapshotFooters: Footers reads every table file's footer in manifest
// order; a table file that is no Parquet file is an error naming the
// snapshot and the file.
func TestSnapshotFooters(t *testing.T) {
	s := publishedAllTypes(t)
	fs, err := s.Footers()
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].SnapshotID != "20261129T061500Z" || fs[0].Position.Seq != 10 || fs[0].Table.QualifiedName() != "db1.all_types" {
		t.Fatalf("footers %+v", fs)
	}
	p := s.Path(s.Manifest.Tables[0].File)
	if err := os.WriteFile(p, []byte("not parquet"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Footers(); err == nil || !strings.Contains(err.Error(), "snapshot 20261129T061500Z: ") || !strings.Contains(err.Error(), p) {
		t.Fatalf("broken table file: %v", err)
	}
}
