package views

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dbtrail/dbtrail/internal/views/viewstest"
)

// TestSandboxRefusesEscapes: a sandboxed session reads the snapshot's
// views, and every attempt to read another file, write one, attach a
// database, install or load an extension, reach the network or unlock the
// settings fails, and leaves no file behind.
func TestSandboxRefusesEscapes(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "main")
	viewstest.Publish(t, src, ordersV1)
	secret := filepath.Join(root, "secret.csv")
	if err := os.WriteFile(secret, []byte("a,b\n1,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "out.csv")
	s := openSession(t, SessionOptions{Options: Options{SourceDir: src}, Sandbox: true})
	ctx := context.Background()
	if got := rowsOf(t, s.conn, "SELECT id, total FROM shop.orders ORDER BY id"); len(got) != 2 {
		t.Fatalf("the views in the sandbox: %q", got)
	}
	for _, q := range []string{
		"SELECT * FROM read_csv('/etc/passwd')",
		"SELECT * FROM read_csv_auto('/etc/passwd')",
		"SELECT * FROM '/etc/passwd'",
		"SELECT * FROM read_text('/etc/passwd')",
		"SELECT * FROM read_blob('/etc/hostname')",
		"SELECT * FROM glob('/etc/*')",
		"SELECT * FROM read_csv('" + secret + "')",
		"SELECT * FROM read_text('" + src + "/../secret.csv')",
		"SELECT * FROM sniff_csv('/etc/passwd')",
		"SELECT * FROM parquet_metadata('" + secret + "')",
		"SELECT * FROM read_parquet('https://example.com/x.parquet')",
		"SELECT * FROM read_csv('s3://bucket/x.csv')",
		"COPY (SELECT 1) TO '" + out + "'",
		"COPY (SELECT 1) TO '" + src + "/out.csv'",
		"ATTACH '" + root + "/x.db' AS x",
		"INSTALL httpfs",
		"LOAD httpfs",
		"SET enable_external_access=true",
		"SET allowed_directories=['/']",
		"SELECT * FROM (SELECT 1) t, (SELECT set_config('enable_external_access', 'true'))",
	} {
		rows, _, err := s.Query(ctx, q)
		if err == nil {
			n := 0
			for rows.Next() {
				n++
			}
			err = rows.Err()
			rows.Close()
			if err == nil {
				t.Errorf("%s: answered %d rows, want it refused", q, n)
			}
		}
	}
	for _, p := range []string{out, filepath.Join(src, "out.csv"), filepath.Join(root, "x.db")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a refused statement wrote %s", p)
		}
	}
}
