package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// itemLine is how the source, go-sql-driver through the port and the
// Python script print a row of app.item: id|name|price|at, NULL as None.
const itemLines = "SELECT CONCAT_WS('|', id, IFNULL(name, 'None'), price, IFNULL(at, 'None')) FROM %s ORDER BY id"

// pymysqlScript reads the port with Python's pymysql (Debian's
// python3-pymysql): it moves the session with SET @@dbtrail_at, prints
// the rows of app.item as itemLines does, then an information_schema
// query's rows, then @@dbtrail_cut.
const pymysqlScript = `
import sys, pymysql
host, port, user, password, at = sys.argv[1:6]
c = pymysql.connect(host=host, port=int(port), user=user, password=password)
cur = c.cursor()
cur.execute("SET @@dbtrail_at = %s", (at,))
cur.execute("SELECT id, name, price, at FROM app.item ORDER BY id")
for r in cur.fetchall():
    print("|".join(str(v) for v in r))
print("--")
cur.execute("SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, COLUMN_KEY FROM information_schema.COLUMNS "
            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION", ("app", "item"))
for r in cur.fetchall():
    print("|".join(str(v) for v in r))
print("--")
cur.execute("SELECT @@dbtrail_cut")
print(cur.fetchone()[0])
c.close()
`

// TestSQLPortClients reads a real backup with its live tail through the
// SQL port at a recorded moment, as clients that cannot run SET first do:
// go-sql-driver with the moment in the DSN's database name (app@gtid:G),
// the mariadb client with it in -D and in USE, and Python's pymysql (a
// third driver) with SET @@dbtrail_at and an information_schema query.
// Each answer equals the source's rows at that moment, with unqualified
// table names resolved in the database named.
func TestSQLPortClients(t *testing.T) {
	python := pymysqlPython(t)
	e := newBackupEnv(t)
	e.execAll(t,
		"CREATE TABLE item (id INT UNSIGNED PRIMARY KEY, name VARCHAR(20), price DECIMAL(8,2) NOT NULL, at DATETIME)",
		"INSERT INTO item VALUES (1, 'one', 1.50, '2026-12-01 10:41:59'), (2, NULL, -0.07, NULL), (3, 'Three', 300, '2026-12-02 00:00:00')")
	e.fullBackup(t)
	// The moment's transaction commits at a time the session sets
	// (SET timestamp): NOW() through the port at that moment is it.
	commit := time.Date(2026, 11, 30, 12, 34, 56, 0, time.UTC)
	conn, err := e.src.Conn(e.ctx)
	must(t, err)
	_, err = conn.ExecContext(e.ctx, fmt.Sprintf("SET timestamp = %d", commit.Unix()))
	must(t, err)
	_, err = conn.ExecContext(e.ctx, "UPDATE item SET price = price + 1, name = 'uno' WHERE id = 1")
	must(t, err)
	var gtidThen string
	must(t, conn.QueryRowContext(e.ctx, "SELECT @@last_gtid").Scan(&gtidThen))
	must(t, conn.Close())
	then := liveLines(t, e, fmt.Sprintf(itemLines, "item"))
	e.exec(t, "DELETE FROM item WHERE id = 2")
	e.exec(t, "INSERT INTO item VALUES (4, 'four', 4.04, NULL)")
	e.waitCaughtUp(t)
	now := liveLines(t, e, fmt.Sprintf(itemLines, "item"))
	if slices.Equal(now, then) {
		t.Fatalf("the changes changed nothing: %v", now)
	}
	addr := startSQLPort(t, e)
	host, port, _ := strings.Cut(addr, ":")

	// go-sql-driver: the moment in the DSN's database name, an unqualified
	// table of it, the same rows as the source then.
	db, err := sql.Open("mysql", fmt.Sprintf("viewer:%s@tcp(%s)/app@gtid:%s?interpolateParams=true", portSecret, addr, gtidThen))
	must(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	if got := portLines(t, e.ctx, db, fmt.Sprintf(itemLines, "item")); !slices.Equal(got, then) {
		t.Fatalf("DSN database app@gtid:%s:\n%v\nthe source then:\n%v", gtidThen, got, then)
	}
	var cut, dbName, nowThen string
	must(t, db.QueryRowContext(e.ctx, "SELECT @@dbtrail_cut, DATABASE(), NOW()").Scan(&cut, &dbName, &nowThen))
	if !strings.Contains(cut, gtidThen) || dbName != "app" || nowThen != commit.Format(time.DateTime) {
		t.Fatalf("@@dbtrail_cut %q, DATABASE() %q, NOW() %q: want GTID %s, app and the commit time %s", cut, dbName, nowThen, gtidThen, commit.Format(time.DateTime))
	}
	// USE app (no moment) keeps the moment; USE app@latest moves to now.
	_, err = db.ExecContext(e.ctx, "USE app")
	must(t, err)
	if got := portLines(t, e.ctx, db, fmt.Sprintf(itemLines, "item")); !slices.Equal(got, then) {
		t.Fatalf("after USE app: %v, want the moment's %v", got, then)
	}
	_, err = db.ExecContext(e.ctx, "USE app@latest")
	must(t, err)
	if got := portLines(t, e.ctx, db, fmt.Sprintf(itemLines, "item")); !slices.Equal(got, now) {
		t.Fatalf("after USE app@latest: %v, want %v", got, now)
	}
	// A moment not kept is refused (1231), the session stays.
	if _, err := db.ExecContext(e.ctx, "USE app@'seq:999999999'"); err == nil || !strings.Contains(err.Error(), "1231") {
		t.Fatalf("USE at a moment past capture: %v, want error 1231", err)
	}

	// The mariadb client: the moment in -D (the handshake's database) and
	// in USE with backticks, which the client passes through unchanged.
	mariadb := func(args ...string) []string {
		t.Helper()
		all := append([]string{"-h", host, "-P", port, "-u", "viewer", "-p" + portSecret, "--batch", "--skip-column-names"}, args...)
		out, err := exec.CommandContext(e.ctx, "mariadb", all...).CombinedOutput()
		if err != nil {
			t.Fatalf("mariadb %v: %v: %s", args, err, out)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	if got := mariadb("-D", "app@gtid:"+gtidThen, "-e", fmt.Sprintf(itemLines, "item")); !slices.Equal(got, then) {
		t.Fatalf("mariadb -D app@gtid:%s:\n%v\nthe source then:\n%v", gtidThen, got, then)
	}
	if got := mariadb("-e", "USE `app@gtid:"+gtidThen+"`; "+fmt.Sprintf(itemLines, "item")); !slices.Equal(got, then) {
		t.Fatalf("mariadb USE `app@gtid:%s`:\n%v\nthe source then:\n%v", gtidThen, got, then)
	}

	// Python's pymysql: SET @@dbtrail_at, rows, information_schema.
	out, err := exec.CommandContext(e.ctx, python, "-c", pymysqlScript, host, port, "viewer", portSecret, "gtid:"+gtidThen).CombinedOutput()
	if err != nil {
		t.Fatalf("pymysql: %v: %s", err, out)
	}
	parts := strings.Split(strings.TrimSpace(string(out)), "\n--\n")
	if len(parts) != 3 {
		t.Fatalf("pymysql printed:\n%s", out)
	}
	if got := strings.Split(parts[0], "\n"); !slices.Equal(got, then) {
		t.Fatalf("pymysql at gtid:%s:\n%v\nthe source then:\n%v", gtidThen, got, then)
	}
	wantCols := "id|int|int unsigned|NO|PRI\nname|varchar|varchar(20)|YES|\nprice|decimal|decimal(8,2)|NO|\nat|datetime|datetime|YES|"
	if parts[1] != wantCols {
		t.Fatalf("pymysql information_schema.COLUMNS:\n%s\nwant:\n%s", parts[1], wantCols)
	}
	if !strings.Contains(parts[2], gtidThen) {
		t.Fatalf("pymysql @@dbtrail_cut %q does not name GTID %s", parts[2], gtidThen)
	}
}

// pymysqlPython is a Python that imports pymysql: Debian's
// /usr/bin/python3 with python3-pymysql (scripts/install-deps.sh), or the
// python3 on PATH. None is a test failure: a driver missing must fail, not
// skip.
func pymysqlPython(t *testing.T) string {
	t.Helper()
	var tried []string
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		out, err := exec.Command(py, "-c", "import pymysql").CombinedOutput()
		if err == nil {
			return py
		}
		tried = append(tried, fmt.Sprintf("%s: %v %s", py, err, strings.TrimSpace(string(out))))
	}
	t.Fatalf("no Python with pymysql (scripts/install-deps.sh installs python3-pymysql): %s", strings.Join(tried, "; "))
	return ""
}

// portLines is the first column of query's rows through the port.
func portLines(t *testing.T, ctx context.Context, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.QueryContext(ctx, query)
	must(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		must(t, rows.Scan(&s))
		out = append(out, s)
	}
	must(t, rows.Err())
	return out
}
