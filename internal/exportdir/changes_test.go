package exportdir

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// changesFixture is the history of db.t: version 1 (id, a), version 2
// adds b at seq 20; and an insert event of each.
func changesFixture(t *testing.T) ([]change.SchemaVersion, []change.Event) {
	t.Helper()
	cat := schema.NewCatalog()
	var hist []change.SchemaVersion
	for i, ddl := range []string{"CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10))", "ALTER TABLE t ADD b INT"} {
		if _, err := schema.ApplyDDL(cat, "db", ddl); err != nil {
			t.Fatal(err)
		}
		def, _ := cat.Get("db", "t")
		hist = append(hist, change.SchemaVersion{Source: "main", Schema: "db", Table: "t", Version: uint32(i + 1),
			Seq: uint64(10 * (i + 1)), DDL: ddl, Definition: def.Clone()})
	}
	image := func(v int, cells ...string) []byte {
		raw := make([][]byte, len(cells))
		for i, c := range cells {
			raw[i] = []byte(c)
		}
		b, err := rowimage.SQLImage(hist[v-1].Definition, rowimage.RawCells(nil, raw))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	events := []change.Event{
		{Seq: 15, Op: change.OpInsert, Schema: "db", Table: "t", SchemaVersion: 1, PK: "[1]", After: image(1, "1", "x"), CommitTime: at, BinlogFile: "b.1", EndPos: 100},
		{Seq: 16, Op: change.OpInsert, Schema: "db", Table: "t", SchemaVersion: 1, PK: "[2]", After: image(1, "2", "y"), CommitTime: at, BinlogFile: "b.1", EndPos: 200},
		{Seq: 25, Op: change.OpInsert, Schema: "db", Table: "t", SchemaVersion: 2, PK: "[3]", After: image(2, "3", "z", "7"), CommitTime: at, BinlogFile: "b.1", EndPos: 300},
	}
	return hist, events
}

func testMeta() ChangesMeta {
	return ChangesMeta{Source: "main", Extra: [][2]string{{snapshot.KeyFrom, "f"}},
		CreateTable: func(v change.SchemaVersion, _ *schema.Table) string { return v.DDL }}
}

// TestChangesWriterShapes: a change of shape starts the next file; each
// file holds its changes under its definition, with its digest; a retry's
// StartChanges removes the files of the attempt before.
func TestChangesWriterShapes(t *testing.T) {
	hist, events := changesFixture(t)
	staging := t.TempDir()
	k := moment.TableKey{Schema: "db", Table: "t"}
	if err := StartChanges(staging, "db", "t"); err != nil {
		t.Fatal(err)
	}
	w, err := NewChangesWriter(staging, k, hist, 30, testMeta())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if err := w.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	files, err := w.Finish(false)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Path != "db/t.000001.parquet" || files[0].Rows != 2 || files[1].Path != "db/t.000002.parquet" || files[1].Rows != 1 || w.Events() != 3 {
		t.Fatalf("files %+v, events %d", files, w.Events())
	}
	for i, f := range files {
		p := filepath.Join(staging, filepath.FromSlash(f.Path))
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		d, err := digest.Of(fh)
		fh.Close()
		if err != nil || d != f.Digest {
			t.Fatalf("%s: digest %v (%v), listed %v", f.Path, d, err, f.Digest)
		}
		var seqs []uint64
		def, err := snapshot.ReadChanges(p, func(c snapshot.Change) error { seqs = append(seqs, c.Seq); return nil })
		if err != nil {
			t.Fatal(err)
		}
		if len(def.Columns) != 2+i || len(seqs) != int(f.Rows) {
			t.Fatalf("%s: %d columns, seqs %v", f.Path, len(def.Columns), seqs)
		}
	}
	if err := StartChanges(staging, "db", "t"); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(filepath.Join(staging, "db")); len(left) != 0 {
		t.Fatalf("StartChanges left %v", left)
	}
}

// TestChangesWriterEmptyAndBad: without changes Finish(true) writes one
// empty file of the table's shape at the range's end and Finish(false)
// none; an event of a version the history does not define is ErrBadChanges
// and Abort leaves no file.
func TestChangesWriterEmptyAndBad(t *testing.T) {
	hist, events := changesFixture(t)
	k := moment.TableKey{Schema: "db", Table: "t"}
	for _, c := range []struct {
		until  uint64
		always bool
		cols   int // of the one file; 0: no file
	}{{15, true, 2}, {30, true, 3}, {30, false, 0}, {5, true, 0}} {
		staging := t.TempDir()
		if err := StartChanges(staging, "db", "t"); err != nil {
			t.Fatal(err)
		}
		w, err := NewChangesWriter(staging, k, hist, c.until, testMeta())
		if err != nil {
			t.Fatal(err)
		}
		files, err := w.Finish(c.always)
		if err != nil {
			t.Fatal(err)
		}
		if c.cols == 0 {
			if len(files) != 0 {
				t.Errorf("until %d always %v: files %+v", c.until, c.always, files)
			}
			continue
		}
		if len(files) != 1 || files[0].Rows != 0 {
			t.Fatalf("until %d: files %+v", c.until, files)
		}
		def, err := snapshot.ReadChanges(filepath.Join(staging, files[0].Path), func(snapshot.Change) error { return nil })
		if err != nil || len(def.Columns) != c.cols {
			t.Errorf("until %d: definition %v (%v), want %d columns", c.until, def, err, c.cols)
		}
	}
	staging := t.TempDir()
	if err := StartChanges(staging, "db", "t"); err != nil {
		t.Fatal(err)
	}
	w, err := NewChangesWriter(staging, k, hist, 30, testMeta())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(events[0]); err != nil {
		t.Fatal(err)
	}
	bad := events[1]
	bad.SchemaVersion = 9
	if err := w.Add(bad); !errors.Is(err, ErrBadChanges) || !strings.Contains(err.Error(), "schema version 9") {
		t.Fatalf("unknown version: %v", err)
	}
	w.Abort()
	if left, _ := os.ReadDir(filepath.Join(staging, "db")); len(left) != 0 {
		t.Fatalf("aborted writer left %v", left)
	}
}

// TestCreateTableOf: without a local snapshot of the shape, a CREATE TABLE
// change gives its own statement and an ALTER one rendered from the
// definition.
func TestCreateTableOf(t *testing.T) {
	hist, _ := changesFixture(t)
	local := moment.LocalCatalog{SourceDir: t.TempDir()}
	if got := CreateTableOf(t.Context(), local, hist[0], hist[0].Definition); got != hist[0].DDL {
		t.Errorf("create: %q", got)
	}
	if got := CreateTableOf(t.Context(), local, hist[1], hist[1].Definition); got != snapshot.CreateTableSQL(hist[1].Definition) {
		t.Errorf("alter: %q", got)
	}
}
