package sqlport

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/internal/views"
	"github.com/dbtrail/dbtrail/internal/views/viewstest"
)

const (
	testSecret  = "0123456789abcdef0123456789abcdef"
	otherSecret = "fedcba9876543210fedcba9876543210"
)

// startPort publishes a snapshot of shop.orders into a new backup folder
// and serves it (no index: the snapshot alone) on a loopback port; it
// returns the port's address.
func startPort(t *testing.T) string {
	t.Helper()
	return startPortWith(t, ordersTable)
}

// ordersTable is shop.orders of startPort.
var ordersTable = viewstest.Table{Schema: "shop",
	Create: "CREATE TABLE orders (id INT UNSIGNED PRIMARY KEY, total DECIMAL(10,2), note VARCHAR(20), placed DATETIME(6), d DATE)",
	Rows: [][]any{
		{"1", "10.50", "first", "2026-12-01 10:41:59.000001", "2026-12-01"},
		{"2", "-0.07", nil, "2026-12-02 00:00:00", "2026-12-02"},
		{"3", "1000.00", "it's", nil, nil},
	}}

// startPortWith is startPort over a snapshot of tables.
func startPortWith(t *testing.T, tables ...viewstest.Table) string {
	t.Helper()
	return startPortCfg(t, func(*Config) {}, tables...)
}

// startPortCfg is startPortWith with the port's Config changed by edit.
func startPortCfg(t *testing.T, edit func(*Config), tables ...viewstest.Table) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "main")
	viewstest.Publish(t, src, tables...)
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("ro "+testSecret+" viewer\nro "+otherSecret+" other\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Addr: "127.0.0.1:0", TokenFile: tokens,
		Session: views.SessionOptions{Options: views.Options{SourceDir: src}, MemoryLimit: "256MB", Threads: 1, Sandbox: true}}
	edit(&cfg)
	p, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return p.Addr()
}

func openPort(t *testing.T, addr, user, pass string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", fmt.Sprintf("%s:%s@tcp(%s)/?interpolateParams=true", user, pass, addr))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func TestPortAnswersDriver(t *testing.T) {
	addr := startPort(t)
	db := openPort(t, addr, "viewer", testSecret)
	var version string
	if err := db.QueryRow("SELECT @@version").Scan(&version); err != nil || version != ServerVersion {
		t.Fatalf("@@version = %q, %v", version, err)
	}
	for _, s := range []string{"SET NAMES utf8mb4", "SET autocommit=1", "USE shop"} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("SELECT `id`, total, note, placed, d FROM `shop`.`orders` ORDER BY id LIMIT 0, 10")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ct := range cts {
		types = append(types, ct.DatabaseTypeName())
	}
	if got := strings.Join(types, ","); got != "UNSIGNED INT,DECIMAL,VARCHAR,DATETIME,DATE" {
		t.Errorf("column types %s", got)
	}
	var got []string
	for rows.Next() {
		var id uint32
		var total string
		var note, placed, d sql.NullString
		if err := rows.Scan(&id, &total, &note, &placed, &d); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d|%s|%v|%v|%v", id, total, note.String, placed.String, d.String))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"1|10.50|first|2026-12-01 10:41:59.000001|2026-12-01", "2|-0.07||2026-12-02 00:00:00.000000|2026-12-02", "3|1000.00|it's||"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM shop.orders WHERE note = ?", "it's").Scan(&n); err != nil || n != 1 {
		t.Errorf("count with an interpolated parameter = %d, %v", n, err)
	}
	var dbName string
	if err := db.QueryRow("SHOW DATABASES").Scan(&dbName); err != nil || dbName != "shop" {
		t.Errorf("SHOW DATABASES = %q, %v", dbName, err)
	}
	var table string
	if err := db.QueryRow("SHOW TABLES").Scan(&table); err != nil || table != "orders" {
		t.Errorf("SHOW TABLES = %q, %v", table, err)
	}
	cols, err := db.Query("SHOW COLUMNS FROM orders")
	if err != nil {
		t.Fatal(err)
	}
	var fields []string
	for cols.Next() {
		var f, ty, null, key, extra string
		var def sql.NullString
		if err := cols.Scan(&f, &ty, &null, &key, &def, &extra); err != nil {
			t.Fatal(err)
		}
		fields = append(fields, f+" "+ty)
	}
	cols.Close()
	if got := strings.Join(fields, ","); got != "id int unsigned,total decimal(10,2),note varchar(20),placed datetime(6),d date" {
		t.Errorf("SHOW COLUMNS: %s", got)
	}
}

func TestPortRefuses(t *testing.T) {
	var src string
	addr := startPortCfg(t, func(c *Config) { src = c.Session.SourceDir }, ordersTable)
	before := treeOf(t, src)
	db := openPort(t, addr, "viewer", testSecret)
	outfile := filepath.Join(t.TempDir(), "x")
	for _, w := range []string{"INSERT INTO shop.orders VALUES (4, 1, 'x', NULL, NULL)", "DELETE FROM shop.orders",
		"CREATE TABLE shop.x (a INT)", "SELECT * FROM shop.orders INTO OUTFILE '" + outfile + "'", "LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE shop.orders",
		"COPY (SELECT 1) TO '" + outfile + "'"} {
		_, err := db.Exec(w)
		var my *gomysql.MySQLError
		if !errors.As(err, &my) || my.Number != 1290 {
			t.Errorf("%s: %v, want error 1290", w, err)
		}
	}
	var my *gomysql.MySQLError
	for _, q := range []string{"SELECT * FROM read_csv('/etc/passwd')", "SELECT * FROM read_text('/etc/passwd')"} {
		if _, err := db.Query(q); !errors.As(err, &my) || my.Number != 1290 && my.Number != 1235 {
			t.Errorf("%s: %v, want a MySQL refusal (1290 or 1235)", q, err)
		}
	}
	// Nothing was written anywhere: no file at the OUTFILE's path, the
	// backup folder as it was.
	if _, err := os.Stat(outfile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused statement wrote %s: %v", outfile, err)
	}
	if after := treeOf(t, src); !slices.Equal(after, before) {
		t.Errorf("the backup folder changed under refused statements:\n%v\nwas\n%v", after, before)
	}
	_, err := db.Exec("SET @@dbtrail_at = 'seq:1'")
	if !errors.As(err, &my) || my.Number != 1231 {
		t.Errorf("SET @@dbtrail_at without the index: %v", err)
	}
	bad := openPort(t, addr, "viewer", "wrong-password-wrong-password!!")
	if err := bad.Ping(); !errors.As(err, &my) || my.Number != 1045 {
		t.Errorf("a wrong password: %v, want error 1045", err)
	}
	nobody := openPort(t, addr, "nobody", testSecret)
	if err := nobody.Ping(); !errors.As(err, &my) || my.Number != 1045 {
		t.Errorf("an unknown user: %v, want error 1045", err)
	}
}

// treeOf lists the files under dir with their sizes and modification
// times, sorted.
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d %s", path, fi.Size(), fi.ModTime().Format(time.RFC3339Nano)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
