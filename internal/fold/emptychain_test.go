package fold_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// TestWithoutEmptyChain: chain files that hold no rows (an empty chain
// start) are dropped, files with rows are kept in their order, the table
// file is untouched, and a file that is not Parquet is an error naming it.
func TestWithoutEmptyChain(t *testing.T) {
	_, def, tableFile := reshapeFixture(t)
	dir := t.TempDir()
	posdel := func(name string, rows ...int64) string {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w, err := snapshot.NewPosdelWriter(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if err := w.Append(r); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	upserts := func(name string, rows int) string {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w, err := snapshot.NewUpsertsWriter(f, def, snapshot.FooterMeta{SnapshotID: "s1"}, snapshot.WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			key := string(rune('7' + i))
			row := []rowimage.Cell{rowimage.TextCell([]byte(key)), rowimage.TextCell([]byte("v")), rowimage.NullCell()}
			if err := w.AppendSQL(row, "["+key+"]", "u"); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	emptyDel, fullDel := posdel("000000.posdel"), posdel("000001.posdel", 1)
	emptyUps, fullUps := upserts("000000.upserts", 0), upserts("000001.upserts", 1)
	at := fold.TableAt{Table: def, TableFile: tableFile,
		Posdel:  []string{emptyDel, fullDel},
		Upserts: []fold.Keyed{fold.Upserts(emptyUps), fold.Upserts(fullUps)}}
	got, err := at.WithoutEmptyChain()
	if err != nil {
		t.Fatal(err)
	}
	if got.TableFile != tableFile || got.Table != def {
		t.Errorf("table file %s, want %s", got.TableFile, tableFile)
	}
	if !slices.Equal(got.Posdel, []string{fullDel}) || len(got.Upserts) != 1 || got.Upserts[0].Path != fullUps {
		t.Errorf("chain %v %v, want only %s and %s", got.Posdel, got.Upserts, fullDel, fullUps)
	}
	if len(at.Posdel) != 2 || len(at.Upserts) != 2 {
		t.Errorf("the receiver changed: %v %v", at.Posdel, at.Upserts)
	}

	only, err := fold.TableAt{Table: def, TableFile: tableFile, Posdel: []string{emptyDel}, Upserts: []fold.Keyed{fold.Upserts(emptyUps)}}.WithoutEmptyChain()
	if err != nil {
		t.Fatal(err)
	}
	if len(only.Posdel) != 0 || len(only.Upserts) != 0 {
		t.Errorf("an all-empty chain kept %v %v", only.Posdel, only.Upserts)
	}

	bad := filepath.Join(dir, "bad.posdel")
	if err := os.WriteFile(bad, []byte("not parquet"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (fold.TableAt{Table: def, TableFile: tableFile, Posdel: []string{bad}}).WithoutEmptyChain(); err == nil {
		t.Error("a chain file that is not Parquet was accepted")
	}
}
