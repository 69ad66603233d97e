package testsuite

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func variables(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows, err := db.Query("SHOW GLOBAL VARIABLES")
	if err != nil {
		t.Fatalf("SHOW VARIABLES: %v", err)
	}
	defer rows.Close()
	vars := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatalf("scan: %v", err)
		}
		vars[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("rows: %v", err)
	}
	return vars
}

func expectVars(t *testing.T, vars map[string]string, want map[string]string) {
	t.Helper()
	for k, w := range want {
		if got, ok := vars[k]; !ok || got != w {
			t.Errorf("%s = %q (present %v), want %q", k, got, ok, w)
		}
	}
}

func TestSourceSettings(t *testing.T) {
	s := StartSource(t)
	db, err := s.DB(testCtx(t), "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	expectVars(t, variables(t, db), map[string]string{
		"log_bin":              "ON",
		"binlog_format":        "ROW",
		"binlog_row_image":     "FULL",
		"binlog_row_metadata":  "FULL",
		"binlog_checksum":      "CRC32",
		"log_slave_updates":    "OFF",
		"server_id":            "1",
		"character_set_server": "utf8mb4",
		"collation_server":     "utf8mb4_unicode_ci",
		"time_zone":            "+00:00",
		"bind_address":         "127.0.0.1",
		"max_connections":      "500",
	})

	var grants string
	if err := db.QueryRow("SHOW GRANTS FOR CURRENT_USER()").Scan(&grants); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(grants, "ALL PRIVILEGES") || !strings.Contains(grants, "WITH GRANT OPTION") {
		t.Errorf("grants = %q, want ALL PRIVILEGES ... WITH GRANT OPTION", grants)
	}
	// Replication privileges are usable: the binlog can be listed.
	rows, err := db.Query("SHOW BINARY LOGS")
	if err != nil {
		t.Fatalf("SHOW BINARY LOGS: %v", err)
	}
	rows.Close()
	// The harness's user setup stays out of the binlog.
	events, err := db.Query("SHOW BINLOG EVENTS")
	if err != nil {
		t.Fatalf("SHOW BINLOG EVENTS: %v", err)
	}
	defer events.Close()
	cols, _ := events.Columns()
	for events.Next() {
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := events.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		if info := string(vals[len(vals)-1]); strings.Contains(info, DefaultUser) {
			t.Errorf("binlog holds the harness's user setup: %s", info)
		}
	}
}

func TestSourceExtraArgsOverride(t *testing.T) {
	s := StartSourceWith(t, "--binlog-format=STATEMENT")
	db, err := s.DB(testCtx(t), "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	expectVars(t, variables(t, db), map[string]string{"binlog_format": "STATEMENT", "log_bin": "ON"})
}

func TestIndexSettings(t *testing.T) {
	s := StartIndex(t)
	db, err := s.DB(testCtx(t), "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	expectVars(t, variables(t, db), map[string]string{
		"log_bin":              "OFF",
		"server_id":            "2",
		"character_set_server": "utf8mb4",
		"time_zone":            "+00:00",
	})
}

func TestTwoServersAtOnce(t *testing.T) {
	ctx := testCtx(t)
	src := StartSource(t)
	idx := StartIndex(t)
	if src.Port == idx.Port {
		t.Fatalf("both servers on port %d", src.Port)
	}
	if err := src.Exec(ctx, "CREATE DATABASE only_on_source"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    *Server
		want int
	}{{src, 1}, {idx, 0}} {
		db, err := c.s.DB(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		var n int
		err = db.QueryRowContext(ctx,
			"SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'only_on_source'").Scan(&n)
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		if n != c.want {
			t.Errorf("%s on %s: only_on_source count %d, want %d", c.s.Role, c.s.Addr(), n, c.want)
		}
	}
}

func TestStopRemovesDatadir(t *testing.T) {
	t.Setenv("DBTRAIL_KEEP_DATADIR", "")
	s := StartIndex(t)
	if _, err := os.Stat(filepath.Join(s.Dir, "mysql")); err != nil {
		t.Fatalf("datadir missing while running: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("datadir %s still there after Stop: %v", s.Dir, err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if err := s.Exec(testCtx(t), "SELECT 1"); err == nil {
		t.Fatal("Exec after Stop succeeded")
	}
}

func TestKillThenRestartKeepsData(t *testing.T) {
	ctx := testCtx(t)
	s := StartSource(t)
	if err := s.Exec(ctx,
		"CREATE DATABASE crash",
		"CREATE TABLE crash.t (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=InnoDB",
		"INSERT INTO crash.t VALUES (1, 'a'), (2, 'ü')",
	); err != nil {
		t.Fatal(err)
	}
	port, dir := s.Port, s.Dir
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(ctx, "SELECT 1"); err == nil {
		t.Fatal("Exec after Kill succeeded")
	}
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Port != port || s.Dir != dir {
		t.Fatalf("Restart moved the server: %s:%d -> %s:%d", dir, port, s.Dir, s.Port)
	}
	db, err := s.DB(ctx, "crash")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	var v string
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*), MAX(v) FROM t").Scan(&n, &v); err != nil {
		t.Fatal(err)
	}
	if n != 2 || v != "ü" {
		t.Fatalf("after crash and restart: count %d max %q, want 2 %q", n, v, "ü")
	}
	// A graceful Restart works too.
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(ctx, "INSERT INTO crash.t VALUES (3, 'c')"); err != nil {
		t.Fatal(err)
	}
}

func TestPersistentDataDir(t *testing.T) {
	ctx := testCtx(t)
	dir := filepath.Join(t.TempDir(), "demo", "source")
	s, err := Start(ctx, Options{Role: RoleSource, DataDir: dir, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(ctx, "CREATE DATABASE kept"); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	s2, err := Start(ctx, Options{Role: RoleSource, DataDir: dir, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Stop()
	if s2.Password == s.Password {
		t.Error("random passwords repeat")
	}
	if err := s2.Exec(ctx, "CREATE TABLE kept.t (id INT PRIMARY KEY)"); err != nil {
		t.Fatalf("database lost across restart of a kept datadir: %v", err)
	}
}

func TestStartRejectsBadOptions(t *testing.T) {
	if _, err := Start(testCtx(t), Options{Role: "primary"}); err == nil {
		t.Fatal("unknown role accepted")
	}
}

func TestStartFailureShowsErrorLog(t *testing.T) {
	if err := Install(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	_, err := Start(testCtx(t), Options{Role: RoleIndex, Dir: t.TempDir(), ExtraArgs: []string{"--no-such-option-xyz"}})
	if err == nil {
		t.Fatal("start with an unknown option succeeded")
	}
	if !strings.Contains(err.Error(), "no-such-option-xyz") {
		t.Fatalf("error lacks the error log tail: %v", err)
	}
}

func TestStartOnTakenPort(t *testing.T) {
	if err := Install(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	_, err = Start(testCtx(t), Options{Role: RoleIndex, Dir: t.TempDir(), Port: port})
	if !errors.Is(err, errPortInUse) {
		t.Fatalf("start on taken port %d: got %v, want errPortInUse", port, err)
	}
}

func TestVersion(t *testing.T) {
	v, err := Version(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v, "MariaDB") {
		t.Fatalf("version %q", v)
	}
}
