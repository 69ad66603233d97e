package catalog

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// TestCheckFiles: a table's files (its table file, then its chain) read
// again are ok as published; one
// whose bytes changed differs, one removed is missing; a table or a
// snapshot the source does not have is a 404 naming it.
func TestCheckFiles(t *testing.T) {
	dir := queryFixture(t)
	srcDir := filepath.Join(dir, "main")
	ids, err := snapshot.ListSnapshots(srcDir)
	if err != nil || len(ids) != 1 {
		t.Fatalf("snapshots %v: %v", ids, err)
	}
	id := ids[0]
	c := &Catalog{BackupDir: dir}
	ctx := context.Background()
	check := func() api.FileCheck {
		t.Helper()
		got, err := c.CheckFiles(ctx, "main", id, "shop.orders")
		if err != nil || got.Snapshot != id || got.Table != "shop.orders" || len(got.Files) != 3 || got.Files[0].Path != "shop/orders.parquet" {
			t.Fatalf("check: %+v, %v", got, err)
		}
		for _, f := range got.Files[1:] { // the empty chain pair stays as published
			if f.Status != "ok" {
				t.Fatalf("chain file: %+v", f)
			}
		}
		return got.Files[0]
	}
	f := check()
	if f.Status != "ok" || f.Detail != "" {
		t.Fatalf("as published: %+v", f)
	}
	path := filepath.Join(snapshot.Folder(srcDir).Snapshot(id), f.Path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if f := check(); f.Status != "differs" || f.Detail == "" {
		t.Fatalf("a changed byte: %+v", f)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if f := check(); f.Status != "missing" {
		t.Fatalf("removed: %+v", f)
	}
	for _, c2 := range []struct{ id, table, field string }{{id, "shop.nope", "table"}, {"20000101T000000Z", "shop.orders", "id"}} {
		_, err := c.CheckFiles(ctx, "main", c2.id, c2.table)
		var ae *api.Error
		if !errors.As(err, &ae) || ae.Status != http.StatusNotFound || ae.Field != c2.field {
			t.Errorf("%s %s: %v, want a 404 on %s", c2.id, c2.table, err, c2.field)
		}
	}
}
