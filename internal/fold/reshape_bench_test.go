package fold_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// BenchmarkReshapeAddColumn reshapes a 200,000-row table file of the ddl
// benchmark's shape (id INT key, pad VARCHAR(60), n BIGINT, d
// DECIMAL(12,3)) with a column added, and, beside it, copies the same file
// unchanged (Rewrite with no window): the reshape's cost over a copy.
func BenchmarkReshapeAddColumn(b *testing.B) {
	ctx := context.Background()
	cat := schema.NewCatalog()
	cat.SetSchemaCharset("app", "utf8mb4")
	if _, err := schema.ApplyDDL(cat, "app", "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, pad VARCHAR(60), n BIGINT, d DECIMAL(12,3))"); err != nil {
		b.Fatal(err)
	}
	old, _ := cat.Get("app", "t")
	dir := b.TempDir()
	path := filepath.Join(dir, "t.parquet")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	tw, err := snapshot.NewTableWriter(f, old, snapshot.FooterMeta{SnapshotID: "s1"}, snapshot.WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 200000 {
		row := []rowimage.Cell{rowimage.TextCell([]byte(fmt.Sprint(i))), rowimage.TextCell([]byte(fmt.Sprintf("pad-%040d", i))),
			rowimage.TextCell([]byte(fmt.Sprint(i * 7))), rowimage.TextCell([]byte(fmt.Sprintf("%d.%03d", i, i%1000)))}
		if err := tw.AppendSQL(row); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := tw.Close(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	stmt := "ALTER TABLE t ADD COLUMN note VARCHAR(20) DEFAULT 'x'"
	if _, err := schema.ApplyDDL(cat, "app", stmt); err != nil {
		b.Fatal(err)
	}
	nw, _ := cat.Get("app", "t")
	r, err := schema.PlanReshape(old, nw, stmt)
	if err != nil {
		b.Fatal(err)
	}
	eng, err := fold.Open(ctx, fold.Options{TempDir: filepath.Join(dir, "fold"), MemoryLimit: "512MB", Threads: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	b.Run("reshape", func(b *testing.B) {
		for b.Loop() {
			if _, err := eng.Reshape(ctx, path, r, nw, snapshot.FooterMeta{}, io.Discard, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("copy", func(b *testing.B) {
		for b.Loop() {
			if _, err := eng.Rewrite(ctx, fold.RewriteInput{Table: old, TableFile: path}, io.Discard, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
