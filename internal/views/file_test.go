package views

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/views/viewstest"
)

// TestSyncFile: the worker's views.sql is written after the first publish,
// left alone by publishes of the same shape, rewritten (as a whole, in the
// form it holds) by a publish of a new shape, and loads in DuckDB.
func TestSyncFile(t *testing.T) {
	src := filepath.Join(t.TempDir(), "main")
	if _, err := SyncFile(src); err == nil {
		t.Fatal("SyncFile before any publish: no error")
	}
	viewstest.Publish(t, src, ordersV1)
	res := sync(t, src, true)
	if res.Tables != 1 || res.Raw || res.Path != filepath.Join(src, FileName) {
		t.Fatalf("first sync: %+v", res)
	}
	before := stat(t, res.Path)
	sync(t, src, false)
	viewstest.Publish(t, src, viewstest.Table{Schema: "shop", Create: ordersV1.Create, Rows: [][]any{{"9", "0.01"}}})
	sync(t, src, false)
	if !os.SameFile(before, stat(t, res.Path)) {
		t.Fatal("views.sql was replaced although the shape did not change")
	}
	loadFile(t, res.Path, "SELECT id, total::VARCHAR FROM shop.orders", "9|0.01")

	viewstest.Publish(t, src, ordersV2, news)
	if res = sync(t, src, true); res.Tables != 2 {
		t.Fatalf("sync after a new shape: %+v", res)
	}
	loadFile(t, res.Path, "SELECT id, total::VARCHAR, note FROM shop.orders", "1|10.50|first", "2|3.25|<nil>", "3|7.00|new")
	loadFile(t, res.Path, "SELECT typeof(seen) FROM crm.news", "TIMESTAMP")

	// A raw file stays raw.
	if _, err := WriteFile(res.Path, Options{SourceDir: src, Raw: true}); err != nil {
		t.Fatal(err)
	}
	sync(t, src, false)
	viewstest.Publish(t, src, ordersV1)
	if res = sync(t, src, true); !res.Raw || res.Tables != 1 {
		t.Fatalf("sync of a raw file: %+v", res)
	}
	loadFile(t, res.Path, "SELECT typeof(total) FROM shop.orders", "VARCHAR", "VARCHAR")
	if b, _ := os.ReadFile(res.Path); !strings.Contains(string(b), modeRaw) || strings.Contains(string(b), "crm") {
		t.Fatalf("views.sql:\n%s", b)
	}
	if left, _ := filepath.Glob(filepath.Join(src, ".views.sql.*")); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// sync runs SyncFile and wants it to have written or not.
func sync(t *testing.T, src string, wrote bool) SyncResult {
	t.Helper()
	res, err := SyncFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if res.Wrote != wrote {
		t.Fatalf("SyncFile wrote %v, want %v", res.Wrote, wrote)
	}
	return res
}

func stat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// loadFile loads a views file into a new DuckDB, as `duckdb -init` does,
// and checks query.
func loadFile(t *testing.T, path, query string, want ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db := openTestDB(t)
	if _, err := db.Exec(string(b)); err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	wantRows(t, db, query, want...)
}
