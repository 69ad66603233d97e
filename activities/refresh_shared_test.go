package activities

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/foldplan"
	"github.com/dbtrail/dbtrail/internal/remote"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/storage"
)

func TestWrittenFilesLeaveOutTheLinks(t *testing.T) {
	out := calls.ConvertTableResult{File: "app/t.parquet", SHA256: "aa", Size: 10, Chain: []calls.ChainFile{
		{Path: "app/t.000000.posdel", Size: 1}, {Path: "app/t.000000.upserts", Size: 2},
		{Path: "app/t.000001.posdel", Size: 3}, {Path: "app/t.000001.upserts", Size: 4}}}
	pair := []foldplan.Link{{Dst: "app/t.parquet"}, {Dst: "app/t.000000.posdel"}, {Dst: "app/t.000000.upserts"}}
	var got []string
	for _, f := range writtenFiles(pair, out) {
		got = append(got, f.Path)
	}
	if want := []string{"app/t.000001.posdel", "app/t.000001.upserts"}; !slices.Equal(got, want) {
		t.Fatalf("a pair wrote %v, want %v", got, want)
	}
	if files := writtenFiles(nil, out); len(files) != 5 || files[0].Digest().SHA256 != "aa" || files[0].Digest().Size != 10 {
		t.Fatalf("a rewrite wrote %+v, want the table file and its chain", files)
	}
}

// sharedFixture is a store holding snapshots published by another worker
// (pubDir) and the Activities of a worker that folds shared tables.
type sharedFixture struct {
	t      *testing.T
	ctx    context.Context
	pubDir string
	m      *remote.Mirror
	a      *Activities
}

func newSharedFixture(t *testing.T) *sharedFixture {
	store, err := storage.NewLocal(t.TempDir())
	must(t, err)
	dir := t.TempDir()
	f := &sharedFixture{t: t, ctx: context.Background(), pubDir: filepath.Join(dir, "publisher", "main"),
		a: &Activities{BackupDir: filepath.Join(dir, "backups"), WorkDir: filepath.Join(dir, "work"), Remote: store, Log: quietLog()}}
	f.m, err = remote.New(store, "main", f.pubDir, quietLog())
	must(t, err)
	return f
}

// publish publishes and uploads snapshot id (after prev) with tables db.t
// and db.u made of the files contents (table file first, then its chain;
// db.u's table file says "u" after the content).
func (f *sharedFixture) publish(id, prev string, contents ...string) {
	t := f.t
	t.Helper()
	b, err := snapshot.NewBuilder(f.pubDir, id)
	must(t, err)
	man := snapshot.Manifest{Source: "main", Kind: snapshot.SnapshotRefresh, Prev: prev}
	for _, table := range []string{"t", "u"} {
		mt := snapshot.ManifestTable{Schema: "db", Table: table, File: "db/" + table + ".parquet", Kind: snapshot.KindDelta}
		for i, c := range contents {
			rel := mt.File
			if i > 0 {
				rel = fmt.Sprintf("db/%s.%06d.%s", table, (i-1)/2, []string{"posdel", "upserts"}[(i-1)%2])
				mt.Chain = append(mt.Chain, rel)
			} else if table == "u" {
				c += " u"
			}
			_, err := b.WriteFile(rel, func(w io.Writer) error { _, err := io.WriteString(w, c); return err })
			must(t, err)
		}
		man.Tables = append(man.Tables, mt)
	}
	must(t, b.Publish(man))
	_, err = f.m.Upload(f.ctx, id, nil)
	must(t, err)
}

// fetch runs fetchPrevTable and clearParts of the shared tables of the
// refresh from prev into id, one after the other, as refreshShared does,
// and returns the parts folder.
func (f *sharedFixture) fetch(prev, id string, tables ...string) snapshot.Folder {
	f.t.Helper()
	parts := snapshot.Folder(f.a.sourceDir("main")).Parts()
	m, err := f.a.mirror(f.ctx, "main")
	must(f.t, err)
	for _, table := range tables {
		in := calls.RefreshTableInput{Source: "main", Prev: prev, SnapshotID: id,
			Table: foldplan.TablePlan{Key: foldplan.TableKey{Schema: "db", Table: table}}}
		man, err := f.a.fetchPrevTable(f.ctx, m, parts, in)
		must(f.t, err)
		must(f.t, clearParts(parts, prev, id, man))
	}
	return parts
}

// inode is the inode number of the file at p.
func inode(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Stat(p)
	must(t, err)
	return fi.Sys().(*syscall.Stat_t).Ino
}

// TestSharedTableFetchesOnlyWhatItsCacheLacks: the previous snapshot's
// files a worker fetched for a shared table stay in its parts folder's
// cache, by sha256, so the next refresh of the table there takes its
// unchanged table file and chain from the cache and fetches only the new
// pair; a cached file that is corrupt is refused by its digest and fetched
// again; the cache keeps only what the previous snapshot lists.
func TestSharedTableFetchesOnlyWhatItsCacheLacks(t *testing.T) {
	f := newSharedFixture(t)
	const s1, s2, s3, s4, s5 = "20261202T100000Z", "20261202T100100Z", "20261202T100200Z", "20261202T100300Z", "20261202T100400Z"
	f.publish(s1, "", "table v1", "", "")
	parts := f.fetch(s1, s2, "t", "u")
	var inodes []uint64
	for _, table := range []string{"t", "u"} {
		inodes = append(inodes, inode(t, filepath.Join(parts.Snapshot(s1), "db", table+".parquet")))
	}

	// The next refresh: the table files and the first pairs are the cached
	// ones (same inode), the new pairs are fetched; the second table too
	// (the first one's clearing of the earlier refresh's folder took none
	// of its files).
	f.publish(s2, s1, "table v1", "", "", "pd 1", "up 1")
	parts = f.fetch(s2, s3, "t", "u")
	for i, table := range []string{"t", "u"} {
		if got := inode(t, filepath.Join(parts.Snapshot(s2), "db", table+".parquet")); got != inodes[i] {
			t.Fatalf("the unchanged table file of %s was fetched again (inode %d, cached %d)", table, got, inodes[i])
		}
	}
	if _, err := os.Stat(parts.Snapshot(s1)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the earlier refresh's previous snapshot is still in the parts folder: %v", err)
	}
	for _, rel := range []string{"db/t.parquet", "db/t.000000.posdel", "db/t.000001.upserts"} {
		p := filepath.Join(parts.Snapshot(s2), filepath.FromSlash(rel))
		d, err := digest.File(p)
		must(t, err)
		if c, ok := cachePath(parts, d); !ok || inode(t, c) != inode(t, p) {
			t.Fatalf("%s is not in the cache", rel)
		}
	}

	// A corrupt cached table file (same size) is refused and fetched again;
	// the cache then holds the good one.
	d, err := digest.File(filepath.Join(parts.Snapshot(s2), "db", "t.parquet"))
	must(t, err)
	cached, _ := cachePath(parts, d)
	must(t, os.Chmod(cached, 0o644))
	must(t, os.WriteFile(cached, []byte("table XX"), 0o644))
	f.publish(s3, s2, "table v1", "", "", "pd 1", "up 1", "pd 2", "up 2")
	parts = f.fetch(s3, s4, "t")
	p := filepath.Join(parts.Snapshot(s3), "db", "t.parquet")
	if b, err := os.ReadFile(p); err != nil || string(b) != "table v1" {
		t.Fatalf("table file after a corrupt cache: %q, %v", b, err)
	}
	if b, err := os.ReadFile(cached); err != nil || string(b) != "table v1" {
		t.Fatalf("cache after a corrupt file was fetched again: %q, %v", b, err)
	}

	// A rewritten table: the old table file leaves the cache.
	f.publish(s4, s3, "table v2", "", "")
	parts = f.fetch(s4, s5, "t")
	if _, err := os.Stat(cached); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the table file no snapshot lists any more is still cached: %v", err)
	}
	ents, err := os.ReadDir(parts.Cache())
	must(t, err)
	if len(ents) != 2 { // t's new table file and the empty pairs' one content (u's old table file is not listed)
		t.Fatalf("cache holds %d files, want 2", len(ents))
	}
}
