package e2e

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/payload"
)

// TestSQLPortMetadataChange: an index and a default added after the
// snapshot (a change of the definition, not of the columns or rows). At a
// moment after it, through the port: SHOW CREATE TABLE and
// information_schema.STATISTICS have the new index (the CREATE TABLE
// rendered from the definition at the moment, saying so), the rows are the
// source's; after a refresh publishes a snapshot past the moment, the same
// moment's SHOW CREATE TABLE is the source's own text, and before the
// change the snapshot's.
func TestSQLPortMetadataChange(t *testing.T) {
	e := newBackupEnv(t)
	e.execAll(t,
		"CREATE TABLE app.meta (id INT PRIMARY KEY, x INT NOT NULL, note VARCHAR(10) COLLATE utf8mb4_bin)",
		"INSERT INTO app.meta VALUES (1, 10, 'a'), (2, 20, NULL)",
	)
	e.fullBackup(t)
	var before, after string
	var srcBefore, srcAfter string
	var name string
	must(t, e.src.QueryRowContext(e.ctx, "SHOW CREATE TABLE app.meta").Scan(&name, &srcBefore))
	e.exec(t, "INSERT INTO app.meta VALUES (3, 30, 'c')")
	must(t, e.src.QueryRowContext(e.ctx, "SELECT @@last_gtid").Scan(&before))
	e.execAll(t, "ALTER TABLE app.meta ADD INDEX by_x (x), ALTER COLUMN note SET DEFAULT 'n'", "INSERT INTO app.meta (id, x) VALUES (4, 40)")
	must(t, e.src.QueryRowContext(e.ctx, "SELECT @@last_gtid").Scan(&after))
	must(t, e.src.QueryRowContext(e.ctx, "SHOW CREATE TABLE app.meta").Scan(&name, &srcAfter))
	e.waitCaughtUp(t)

	addr := startSQLPort(t, e)
	open := func(gtid string) *sql.DB {
		db, err := sql.Open("mysql", fmt.Sprintf("viewer:%s@tcp(%s)/app@gtid:%s", portSecret, addr, gtid))
		must(t, err)
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		return db
	}
	show := func(db *sql.DB) string {
		t.Helper()
		var n, create string
		must(t, db.QueryRowContext(e.ctx, "SHOW CREATE TABLE meta").Scan(&n, &create))
		return create
	}
	indexes := func(db *sql.DB) string {
		t.Helper()
		rows, err := db.QueryContext(e.ctx, "SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 'meta' ORDER BY INDEX_NAME")
		must(t, err)
		defer rows.Close()
		var out []string
		for rows.Next() {
			var i, c string
			must(t, rows.Scan(&i, &c))
			out = append(out, i+"("+c+")")
		}
		must(t, rows.Err())
		return strings.Join(out, " ")
	}
	rowsOf := func(db *sql.DB) string {
		t.Helper()
		d, err := tableDigest(e.ctx, db, "SELECT id, x, note FROM meta ORDER BY id")
		must(t, err)
		return d
	}

	at := open(after)
	if got := show(at); !strings.Contains(got, "KEY `by_x` (`x`)") || !strings.Contains(got, "rebuilt by dbtrail") {
		t.Errorf("SHOW CREATE TABLE after the change, before a snapshot holds it:\n%s", got)
	}
	if got := indexes(at); got != "PRIMARY(id) by_x(x)" {
		t.Errorf("information_schema.STATISTICS after the change: %s", got)
	}
	srcRows, err := tableDigest(e.ctx, e.src, "SELECT id, x, note FROM app.meta ORDER BY id")
	must(t, err)
	if got := rowsOf(at); got != srcRows {
		t.Errorf("rows after the change through the port %s, the source's %s", got, srcRows)
	}
	if got := show(open(before)); got != srcBefore {
		t.Errorf("SHOW CREATE TABLE before the change:\n%s\nthe source's then:\n%s", got, srcBefore)
	}
	// The rendered CREATE TABLE names no collation: the columns still
	// compare under the snapshot's (note is utf8mb4_bin: 'A' is not 'a').
	var n int
	must(t, at.QueryRowContext(e.ctx, "SELECT count(*) FROM meta WHERE note = 'A'").Scan(&n))
	if n != 0 {
		t.Errorf("note = 'A' under utf8mb4_bin through the port: %d rows, want 0", n)
	}

	// A refresh past the moment: its snapshot holds the table's CREATE
	// TABLE of then (no change between), the moment's base is still the
	// snapshot before the change.
	e.exec(t, "INSERT INTO app.meta VALUES (5, 50, 'e')")
	e.waitCaughtUp(t)
	e.refresh(t, payload.RefreshInput{TableDeltas: true})
	if got := show(open(after)); got != srcAfter {
		t.Errorf("SHOW CREATE TABLE after the change, a later snapshot holding it:\n%s\nthe source's:\n%s", got, srcAfter)
	}
	if got := show(open(before)); got != srcBefore {
		t.Errorf("SHOW CREATE TABLE before the change, after the refresh:\n%s\nthe source's then:\n%s", got, srcBefore)
	}
}
