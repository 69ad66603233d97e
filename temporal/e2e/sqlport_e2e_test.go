package e2e

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/dbtrail/dbtrail/api"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/sqlport"
	"github.com/dbtrail/dbtrail/internal/tail"
	"github.com/dbtrail/dbtrail/internal/views"
)

const portSecret = "ro-sqlport-secret-0123456789abcdef"

// acctQuery reads app.acct on the source and through the port alike; `at`
// is quoted: AT is a DuckDB keyword (docs/sql-port.md).
const acctQuery = "SELECT `id`, bal, note, `at` FROM `app`.`acct` ORDER BY id"

// acctLines scans acctQuery's rows on db into typed Go values (the
// driver's types: uint64, DECIMAL as its text, NULL strings; DATETIME as
// the time its text names)
// and prints them, so two databases' answers compare as the driver sees
// them.
func acctLines(t *testing.T, ctx context.Context, db *sql.DB) []string {
	t.Helper()
	rows, err := db.QueryContext(ctx, acctQuery)
	must(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id uint64
		var bal string
		var note sql.NullString
		var at sql.NullString
		must(t, rows.Scan(&id, &bal, &note, &at))
		var when time.Time
		if at.Valid { // DATETIME(6) as text: the source writes 6 digits, the port only those not zero
			when, err = time.Parse("2006-01-02 15:04:05.999999", at.String)
			must(t, err)
		}
		out = append(out, fmt.Sprintf("%d|%s|%v|%v", id, bal, note, when))
	}
	must(t, rows.Err())
	return out
}

// TestSQLPortTimeTravel starts the SQL port over a real backup with the
// live tail and reads it with go-sql-driver/mysql and the mariadb client:
// the rows equal the source's now, SET @@dbtrail_at moves the session to a
// recorded moment whose rows equal the source's then, @@dbtrail_cut names
// the cut, and writes, a moment past capture, one before the oldest
// snapshot and a wrong password are refused.
func TestSQLPortTimeTravel(t *testing.T) {
	bin := buildDbtrailAsync(t)
	e := newBackupEnv(t)
	for _, q := range []string{
		"CREATE TABLE acct (id INT UNSIGNED PRIMARY KEY, bal DECIMAL(12,2) NOT NULL, note VARCHAR(20), at DATETIME(6))",
		"INSERT INTO acct VALUES (1, 100.10, 'one', '2026-12-01 10:41:59.000001'), (2, -0.07, NULL, '2026-12-02 00:00:00'), (3, 300, 'it''s', NULL)",
		"CREATE TABLE codes (id INT PRIMARY KEY, code VARCHAR(10) COLLATE utf8mb4_bin) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
		"INSERT INTO codes VALUES (1, 'abc'), (2, 'ABC')",
	} {
		e.exec(t, q)
	}
	var gtidBefore string // a transaction before the full backup's snapshot
	must(t, e.src.QueryRowContext(e.ctx, "SELECT @@last_gtid").Scan(&gtidBefore))
	e.exec(t, "INSERT INTO acct VALUES (9, 9, 'gone', NULL)")
	e.exec(t, "DELETE FROM acct WHERE id = 9")
	e.waitCaughtUp(t)
	e.fullBackup(t)
	var gtidThen string
	e.exec(t, "UPDATE acct SET bal = bal + 1, note = 'then' WHERE id = 1")
	must(t, e.src.QueryRowContext(e.ctx, "SELECT @@last_gtid").Scan(&gtidThen))
	e.waitCaughtUp(t)
	then := acctLines(t, e.ctx, e.src)
	e.exec(t, "DELETE FROM acct WHERE id = 2")
	e.exec(t, "INSERT INTO acct VALUES (4, 4.04, 'four', '2026-12-03 01:02:03.5')")
	var gtidNow string
	must(t, e.src.QueryRowContext(e.ctx, "SELECT @@last_gtid").Scan(&gtidNow))
	e.waitCaughtUp(t)
	now := acctLines(t, e.ctx, e.src)
	if slices.Equal(now, then) {
		t.Fatalf("the changes changed nothing: %v", now)
	}

	addr := startSQLPort(t, e)
	db, err := sql.Open("mysql", fmt.Sprintf("viewer:%s@tcp(%s)/?interpolateParams=true", portSecret, addr))
	must(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1) // one session: SET @@dbtrail_at holds for the statements after it

	if got := acctLines(t, e.ctx, db); !slices.Equal(got, now) {
		t.Fatalf("latest through the port:\n%v\nthe source:\n%v", got, now)
	}
	var cut string
	must(t, db.QueryRowContext(e.ctx, "SELECT @@dbtrail_cut").Scan(&cut))
	if !strings.Contains(cut, gtidNow) {
		t.Fatalf("@@dbtrail_cut %q does not name GTID %s", cut, gtidNow)
	}
	_, err = db.ExecContext(e.ctx, "SET @@dbtrail_at = 'gtid:"+gtidThen+"'")
	must(t, err)
	if got := acctLines(t, e.ctx, db); !slices.Equal(got, then) {
		t.Fatalf("at GTID %s through the port:\n%v\nthe source then:\n%v", gtidThen, got, then)
	}
	must(t, db.QueryRowContext(e.ctx, "SELECT @@dbtrail_cut").Scan(&cut))
	if !strings.Contains(cut, gtidThen) {
		t.Fatalf("@@dbtrail_cut at GTID %s: %q", gtidThen, cut)
	}
	var my *gomysql.MySQLError
	_, err = db.ExecContext(e.ctx, "SET @@dbtrail_at = 'seq:999999999'")
	if !errors.As(err, &my) || my.Number != 1231 {
		t.Fatalf("a moment past capture: %v, want error 1231", err)
	}
	if got := acctLines(t, e.ctx, db); !slices.Equal(got, then) {
		t.Fatalf("a refused moment moved the session: %v", got)
	}
	_, err = db.ExecContext(e.ctx, "SET @@dbtrail_at = 'gtid:"+gtidBefore+"'")
	if !errors.As(err, &my) || my.Number != 1231 || !strings.Contains(my.Message, "before the oldest snapshot") {
		t.Fatalf("a moment before the oldest snapshot: %v, want error 1231 saying so", err)
	}
	if got := acctLines(t, e.ctx, db); !slices.Equal(got, then) {
		t.Fatalf("a moment before the oldest snapshot moved the session: %v", got)
	}
	_, err = db.ExecContext(e.ctx, "SET @@dbtrail_at = 'latest'")
	must(t, err)
	if got := acctLines(t, e.ctx, db); !slices.Equal(got, now) {
		t.Fatalf("back at latest: %v, want %v", got, now)
	}
	_, err = db.ExecContext(e.ctx, "UPDATE app.acct SET bal = 0")
	if !errors.As(err, &my) || my.Number != 1290 {
		t.Fatalf("a write: %v, want error 1290", err)
	}
	bad, err := sql.Open("mysql", fmt.Sprintf("viewer:wrong-%s@tcp(%s)/", portSecret, addr))
	must(t, err)
	defer bad.Close()
	if err := bad.PingContext(e.ctx); !errors.As(err, &my) || my.Number != 1045 {
		t.Fatalf("a wrong password: %v, want error 1045", err)
	}
	if got := acctLines(t, e.ctx, e.src); !slices.Equal(got, now) {
		t.Fatalf("the source changed: %v", got)
	}
	// A schema change in the live tail keeps the snapshot's collations:
	// code stays utf8mb4_bin, case sensitive, as at the source.
	e.exec(t, "ALTER TABLE codes ADD COLUMN n INT, ADD COLUMN u VARCHAR(10), ADD COLUMN ci VARCHAR(10) COLLATE utf8mb4_general_ci")
	e.exec(t, "UPDATE codes SET n = 7, u = code, ci = code")
	e.waitCaughtUp(t)
	for _, q := range []string{"SELECT count(*) FROM app.codes WHERE code = 'abc'", "SELECT n FROM app.codes WHERE id = 1",
		"SELECT count(*) FROM app.codes WHERE u IS NOT NULL"} {
		var got, want sql.NullInt64
		must(t, db.QueryRowContext(e.ctx, q).Scan(&got))
		must(t, e.src.QueryRowContext(e.ctx, strings.Replace(q, "app.", "", 1)).Scan(&want))
		if got != want {
			t.Fatalf("%s after ALTER TABLE in the tail: %v through the port, %v at the source", q, got, want)
		}
	}
	// The columns it added have collations no snapshot holds yet: their
	// comparisons are refused, not answered under a guessed one.
	for _, col := range []string{"u", "ci"} {
		_, err := db.ExecContext(e.ctx, "SELECT count(*) FROM app.codes WHERE "+col+" = 'ABC'")
		if !errors.As(err, &my) || my.Number != 1235 || !strings.Contains(my.Message, "app.codes."+col) {
			t.Fatalf("a comparison of %s, added after the snapshot: %v, want error 1235 naming it", col, err)
		}
	}

	// The mariadb command-line client, batch mode.
	host, port, _ := strings.Cut(addr, ":")
	out, err := exec.CommandContext(e.ctx, "mariadb", "-h", host, "-P", port, "-u", "viewer", "-p"+portSecret,
		"--batch", "--skip-column-names", "-e", "SELECT id, bal, note FROM app.acct ORDER BY id").CombinedOutput()
	if err != nil {
		t.Fatalf("mariadb: %v: %s", err, out)
	}
	want := strings.Join(liveLines(t, e, "SELECT id, bal, IFNULL(note, 'NULL') FROM acct ORDER BY id"), "\n")
	if got := strings.ReplaceAll(strings.TrimSpace(string(out)), "\t", ","); got != want {
		t.Fatalf("mariadb client:\n%s\nthe source:\n%s", got, want)
	}
	out, err = exec.CommandContext(e.ctx, "mariadb", "-h", host, "-P", port, "-u", "viewer", "-p"+portSecret,
		"--batch", "-e", "DELETE FROM app.acct").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "1290") {
		t.Fatalf("mariadb client write: %v: %s", err, out)
	}

	// `dbtrail sql`, the command, serves the same with the index's tail.
	addr = startSQLCmd(t, e, bin())
	host, port, _ = strings.Cut(addr, ":")
	out, err = exec.CommandContext(e.ctx, "mariadb", "-h", host, "-P", port, "-u", "viewer", "-p"+portSecret,
		"--batch", "--skip-column-names", "-e", "SELECT id, bal, note FROM app.acct ORDER BY id").CombinedOutput()
	if err != nil {
		t.Fatalf("mariadb through dbtrail sql: %v: %s", err, out)
	}
	if got := strings.ReplaceAll(strings.TrimSpace(string(out)), "\t", ","); got != want {
		t.Fatalf("mariadb through dbtrail sql:\n%s\nthe source:\n%s", got, want)
	}
}

// startSQLCmd runs `dbtrail sql` (the binary) on e's backup folder and
// index with the user viewer and returns its address.
func startSQLCmd(t *testing.T, e *backupEnv, bin string) string {
	t.Helper()
	tokens := filepath.Join(t.TempDir(), "tokens")
	must(t, os.WriteFile(tokens, []byte("ro "+portSecret+" viewer\n"), 0o600))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	must(t, ln.Close())
	ctx, cancel := context.WithCancel(e.ctx)
	cmd := exec.CommandContext(ctx, bin, "sql", "--backup-dir", e.acts.BackupDir, "--sql-addr", addr, "--token-file", tokens,
		"--memory-limit", "256MB")
	cmd.Env = append(os.Environ(), "DBTRAIL_INDEX_DSN="+e.indexDSN)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cancel(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "dbtrail sql is listening on "+addr) && strings.Contains(sc.Text(), "tail true") {
			return addr
		}
	}
	t.Fatalf("dbtrail sql ended before it listened: %v", sc.Err())
	return ""
}

// startSQLPort serves e's backup folder with the live tail over e's index
// on a loopback port, the user viewer with password portSecret, and
// returns its address.
func startSQLPort(t *testing.T, e *backupEnv) string {
	t.Helper()
	tokens := filepath.Join(t.TempDir(), "tokens")
	must(t, os.WriteFile(tokens, []byte("ro "+portSecret+" viewer\n"), 0o600))
	src := filepath.Join(e.acts.BackupDir, "main")
	p, err := sqlport.Listen(sqlport.Config{Addr: "127.0.0.1:0", TokenFile: tokens,
		Session: views.SessionOptions{Options: views.Options{SourceDir: src}, MemoryLimit: "256MB", Threads: 1, Sandbox: true},
		Tail:    &tail.Reader{Past: moment.Past{Source: "main", Index: e.store, SourceDir: src}, MemoryLimit: "256MB"}})
	must(t, err)
	ctx, cancel := context.WithCancel(e.ctx)
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

// TestDevSQLPort starts `dbtrail dev --sql-addr` over a real backup: its
// start block names the port, and the mariadb client reads the backup with
// dev's own token (its name as the user, its secret as the password).
func TestDevSQLPort(t *testing.T) {
	bin := buildDbtrailAsync(t)
	e := newBackupEnv(t)
	e.exec(t, "CREATE TABLE dev_t (id INT PRIMARY KEY, v VARCHAR(5))")
	e.exec(t, "INSERT INTO dev_t VALUES (1, 'a'), (2, NULL)")
	e.fullBackup(t)
	dataDir := filepath.Join(e.dir, "dev")
	sqlAddr := freeAddr(t)
	ctx, cancel := context.WithCancel(e.ctx)
	cmd := exec.CommandContext(ctx, bin(), "dev", "--data-dir", dataDir, "--backup-dir", e.acts.BackupDir, "--capture=false",
		"--frontend-addr", freeAddr(t), "--ui-addr", "", "--metrics-addr", "", "--api-addr", freeAddr(t), "--sql-addr", sqlAddr)
	cmd.Env = append(os.Environ(), "DBTRAIL_INDEX_DSN="+e.indexDSN, "DBTRAIL_SOURCE_DSN="+e.source.DSN(""), "DBTRAIL_API_TOKENS=")
	lines, stop := runUntil(t, cmd, cancel, "SQL port")
	defer stop()
	host, port, _ := strings.Cut(sqlAddr, ":")
	if !strings.Contains(strings.Join(lines, "\n"), "mariadb -h "+host+" -P "+port) {
		t.Fatalf("dev's start block does not name the SQL port:\n%s", strings.Join(lines, "\n"))
	}
	secret, err := api.DevSecret(filepath.Join(dataDir, api.DevTokenFile))
	must(t, err)
	out, err := exec.CommandContext(e.ctx, "mariadb", "-h", host, "-P", port, "-u", api.DevTokenName, "-p"+secret,
		"--batch", "--skip-column-names", "-e", "SELECT id, v FROM app.dev_t ORDER BY id").CombinedOutput()
	if err != nil {
		t.Fatalf("mariadb through dev: %v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "1\ta\n2\tNULL" {
		t.Fatalf("mariadb through dev: %q", got)
	}
	// The line dev prints runs as printed: it reads the password from the
	// token file.
	var line string
	for _, l := range lines {
		if _, rest, ok := strings.Cut(l, "SQL port"); ok {
			line, _, _ = strings.Cut(strings.TrimSpace(rest), "  (")
		}
	}
	out, err = exec.CommandContext(e.ctx, "sh", "-c", line+" --batch --skip-column-names -e 'SELECT count(*) FROM app.dev_t'").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "2" {
		t.Fatalf("dev's printed line %q: %v: %s", line, err, out)
	}
}
