package exportdir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/digest"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

func TestStagingDir(t *testing.T) {
	got := StagingDir("/x/out.sql", "0123456789abcdefXYZ")
	if want := "/x/.out.sql.0123456789ab" + StagingSuffix; got != want {
		t.Errorf("StagingDir: %s, want %s", got, want)
	}
	if !IsStaging(got) || !IsStaging(StagingDir("/x/y", "r1")) {
		t.Error("a staging folder is not IsStaging")
	}
	for _, p := range []string{"/x/out", "/x/out" + StagingSuffix, "/x/.out", "/"} {
		if IsStaging(p) {
			t.Errorf("IsStaging(%q)", p)
		}
	}
}

func TestCheckOut(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.sql")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		out, format string
		oneFile     bool
		refused     string // part of the error; "" = accepted
	}{
		{filepath.Join(dir, "new.sql"), "sql", true, ""},
		{filepath.Join(dir, "new"), "parquet", false, ""},
		{file, "sql", true, ""}, // a .sql export replaces its file
		{"rel/out.sql", "sql", true, "absolute path"},
		{"", "sql", true, "absolute path"},
		{filepath.Join(dir, "missing", "out"), "parquet", false, "does not exist"},
		{dir, "sql", true, "is a folder"},
		{dir, "parquet", false, "exists: a parquet export writes a new folder"},
		{file, "changes", false, "exists: a changes export"},
	}
	for _, c := range cases {
		err := CheckOut(c.out, c.format, c.oneFile)
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("CheckOut(%q, %s): %v", c.out, c.format, err)
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("CheckOut(%q, %s): %v, want an error with %q", c.out, c.format, err, c.refused)
		}
	}
}

// writeTable writes a one-row table file at path whose footer names cut.
func writeTable(t *testing.T, path string, cut moment.Cut) {
	t.Helper()
	tbl := &schema.Table{Schema: "db", Name: "t", Key: []string{"id"}, KeyKind: schema.KeyPrimary,
		Columns: []schema.Column{{Name: "id", Type: "int"}}}
	text, err := json.Marshal(cut)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	meta := snapshot.FooterMeta{CreateTable: "CREATE TABLE `t` (`id` int NOT NULL, PRIMARY KEY (`id`))",
		Position: binlogpos.Position{File: "bin.000001", Pos: 4, Seq: cut.Seq}, SnapshotID: "s1", Source: "src",
		Extra: [][2]string{{snapshot.KeyCut, string(text)}}}
	tw, err := snapshot.NewTableWriter(f, tbl, meta, snapshot.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.AppendSQL(rowimage.RawCells(nil, [][]byte{[]byte("1")})); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestReusable(t *testing.T) {
	dir := t.TempDir()
	cut := moment.Cut{Seq: 42, Landed: true, Txn: change.Txn{Position: binlogpos.Position{File: "bin.000001", Pos: 900}}}
	path := filepath.Join(dir, "t.parquet")
	writeTable(t, path, cut)
	d, rows, ok := Reusable(path, cut)
	want, err := digest.File(path)
	if err != nil {
		t.Fatal(err)
	}
	if !ok || rows != 1 || d != want {
		t.Fatalf("Reusable at its own cut: %v rows %d digest %v; want true, 1, %v", ok, rows, d, want)
	}
	other := cut
	other.Seq = 43
	if _, _, ok := Reusable(path, other); ok {
		t.Error("a file of seq 42 is reusable at seq 43")
	}
	moved := cut
	moved.Txn.Position.Pos = 901
	if _, _, ok := Reusable(path, moved); ok {
		t.Error("a file of another transaction is reusable")
	}
	if _, _, ok := Reusable(filepath.Join(dir, "missing.parquet"), cut); ok {
		t.Error("a missing file is reusable")
	}
	half := filepath.Join(dir, "half.parquet")
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(half, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := Reusable(half, cut); ok {
		t.Error("a truncated file is reusable")
	}
}
