package capture

import (
	"io"
	"log/slog"
	"testing"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
)

// TestRenameSwapKeepsBothNames: a swap through a third name ends with both
// names defined (each with the other's columns) and the third name never
// defined, in the history and in capture's catalog.
func TestRenameSwapKeepsBothNames(t *testing.T) {
	tr := newTableTracker("src", slog.New(slog.NewTextHandler(io.Discard, nil)))
	at := binlogpos.Position{File: "binlog.000001", Pos: 100}
	for _, q := range []string{"CREATE TABLE a (id INT PRIMARY KEY, va INT)", "CREATE TABLE b (id INT PRIMARY KEY, vb INT)"} {
		if _, err := tr.applyDDL("db", q, at, 1); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := tr.applyDDL("db", "RENAME TABLE a TO t, b TO a, t TO b", at, 2)
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]string{}
	for _, v := range vs {
		col := "<dropped>"
		if v.Definition != nil {
			col = v.Definition.Columns[1].Name
		}
		last[v.Table] = col
	}
	if last["a"] != "vb" || last["b"] != "va" || len(last) != 2 {
		t.Fatalf("last versions %v, want a with vb, b with va, nothing else", last)
	}
	for name, col := range map[string]string{"a": "vb", "b": "va"} {
		d, ok := tr.catalog.Get("db", name)
		if !ok || d.Columns[1].Name != col {
			t.Fatalf("catalog %s: %+v %v", name, d, ok)
		}
	}
	// A plain rename still ends the old name.
	vs, err = tr.applyDDL("db", "RENAME TABLE a TO c", at, 3)
	if err != nil || len(vs) != 2 || vs[0].Table != "a" || vs[0].Definition != nil || vs[1].Table != "c" || vs[1].Definition == nil {
		t.Fatalf("%+v %v", vs, err)
	}
}
