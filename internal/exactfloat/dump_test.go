package exactfloat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// TestSelect: tables with FLOAT columns and a key are selected with their
// position; one without a key is listed as dumped with the reason; one
// without FLOAT columns is neither.
func TestSelect(t *testing.T) {
	defs := []*schema.Table{
		table(t, "CREATE TABLE t (id INT PRIMARY KEY, d DOUBLE)"),
		table(t, "CREATE TABLE t (a INT, f FLOAT)"),
		table(t, "CREATE TABLE t (id INT PRIMARY KEY, f FLOAT)"),
	}
	tables, asDumped, err := Select(defs)
	must(t, err)
	if len(tables) != 1 || tables[0].Index != 2 || tables[0].Def != defs[2] || len(tables[0].Plan.Floats) != 1 {
		t.Fatalf("tables %+v", tables)
	}
	if len(asDumped) != 1 || !strings.Contains(asDumped[0], "app.t") {
		t.Fatalf("as dumped %q", asDumped)
	}
}

// TestFixThenSink: Fix writes the exact values read, the value at the dump
// (its first change's before image) for a key changed since, and nothing
// for a key inserted since; a Sink from OpenSink puts them into the dumped
// rows; its runs folder is gone.
func TestFixThenSink(t *testing.T) {
	def := table(t, "CREATE TABLE t (id INT PRIMARY KEY, f FLOAT)")
	tables, _, err := Select([]*schema.Table{def})
	must(t, err)
	image := func(id, f string) []byte {
		b, err := rowimage.SQLImage(def, rowimage.RawCells(nil, [][]byte{[]byte(id), []byte(f)}))
		must(t, err)
		return b
	}
	events := []change.Event{
		{Seq: 10, Op: change.OpUpdate, PK: "[1]", Before: image("1", "3.1415927"), After: image("1", "2.7182817")},
		{Seq: 11, Op: change.OpUpdate, PK: "[1]", Before: image("1", "2.7182817"), After: image("1", "5")},
		{Seq: 12, Op: change.OpInsert, PK: "[3]", After: image("3", "1.1111111")},
	}
	window := func(fn func(change.Event) error) error {
		for _, e := range events {
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	}
	read := func(w *Writer) (int64, error) {
		must(t, w.Add([]byte("[1]"), []*float32{f32(5)}))
		must(t, w.Add([]byte("[2]"), []*float32{f32(1.2345678)}))
		must(t, w.Add([]byte("[3]"), []*float32{f32(1.1111111)}))
		return 3, nil
	}
	dump := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dump, Dir), 0o700))
	res, err := Fix(tables[0], window, read, filepath.Join(dump, Dir), filepath.Join(dump, FixFile(0)))
	must(t, err)
	if res.Rows != 3 || res.ChangedKeys != 2 || res.Fixes != 2 {
		t.Fatalf("result %+v, want 3 rows, 2 changed keys, 2 fixes", res)
	}
	if ents, _ := os.ReadDir(filepath.Join(dump, Dir)); len(ents) != 1 {
		t.Fatalf("fix folder holds %v, want the fix file only", ents)
	}
	var got rows
	s, done, err := OpenSink(dump, FixFile(0), def, &got)
	must(t, err)
	defer done()
	for _, r := range [][]string{{"1", "3.14159"}, {"2", "1.23457"}} {
		must(t, s.AppendSQL(rowimage.RawCells(nil, [][]byte{[]byte(r[0]), []byte(r[1])})))
	}
	if s.Fixed() != 2 || string(got[0][1]) != "3.1415927410125732" || string(got[1][1]) != "1.2345677614212036" {
		t.Fatalf("fixed %d, rows %q", s.Fixed(), got)
	}
}

// TestFixStopsOnWindowError: an error of the window scan is Fix's, and no
// fix file is written.
func TestFixStopsOnWindowError(t *testing.T) {
	def := table(t, "CREATE TABLE t (id INT PRIMARY KEY, f FLOAT)")
	tables, _, err := Select([]*schema.Table{def})
	must(t, err)
	boom := errors.New("index gone")
	dir := t.TempDir()
	_, err = Fix(tables[0], func(func(change.Event) error) error { return boom },
		func(*Writer) (int64, error) { t.Fatal("read after a failed window"); return 0, nil }, dir, filepath.Join(dir, "fix"))
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want %v", err, boom)
	}
	if _, err := os.Stat(filepath.Join(dir, "fix")); !os.IsNotExist(err) {
		t.Fatalf("fix file written: %v", err)
	}
}

// TestOpenSinkRefuses: a fix file outside the dump folder, or for a table
// that cannot have one, is ErrBadFixFile; a missing one is another error.
func TestOpenSinkRefuses(t *testing.T) {
	def := table(t, "CREATE TABLE t (id INT PRIMARY KEY, f FLOAT)")
	var got rows
	if _, _, err := OpenSink(t.TempDir(), "../x.floats", def, &got); !errors.Is(err, ErrBadFixFile) {
		t.Errorf("outside the dump: %v", err)
	}
	if _, _, err := OpenSink(t.TempDir(), FixFile(0), table(t, "CREATE TABLE t (a INT, f FLOAT)"), &got); !errors.Is(err, ErrBadFixFile) {
		t.Errorf("no key: %v", err)
	}
	if _, _, err := OpenSink(t.TempDir(), FixFile(0), def, &got); err == nil || errors.Is(err, ErrBadFixFile) {
		t.Errorf("missing file: %v", err)
	}
}
