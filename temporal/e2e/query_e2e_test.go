package e2e

import (
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/views"
	"github.com/dbtrail/dbtrail/payload"
)

// TestQueryFollowsShape: with capture and the worker running, the first
// full backup writes views.sql. A CREATE TABLE and an ALTER TABLE … ADD
// COLUMN on the source are folded by the next refresh (no full backup: the
// new table from its row events, the column added to the previous rows);
// with no other command, `dbtrail query` (the real
// binary) and the views.sql the worker rewrote show the new table and
// column with the source's values, typed. A refresh of the same shape
// leaves views.sql alone. The histories replay.
func TestQueryFollowsShape(t *testing.T) {
	bin := buildDbtrail(t)
	e := newBackupEnv(t)
	w := newWorkload(4)
	w.setup(t, e, 10)
	e.waitCaughtUp(t)
	e.fullBackup(t)
	srcDir := filepath.Join(e.acts.BackupDir, "main")
	viewsFile := filepath.Join(srcDir, views.FileName)
	first, err := os.Stat(viewsFile)
	if err != nil {
		t.Fatalf("the full backup wrote no views.sql: %v", err)
	}
	query := func(sql string) string {
		t.Helper()
		cmd := exec.CommandContext(e.ctx, bin, "query", "--backup-dir", e.acts.BackupDir, "--format", "csv", "--memory-limit", "256MB", sql)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("dbtrail query %q: %v\n%s", sql, err, stderrOf(err))
		}
		return string(out)
	}
	liveCSV := func(header, sql string) string {
		t.Helper()
		return header + "\n" + strings.Join(liveLines(t, e, sql), "\n") + "\n"
	}
	if got, want := query("SELECT count(*) AS n FROM app.ints"), liveCSV("n", "SELECT COUNT(*) FROM ints"); got != want {
		t.Fatalf("dbtrail query after the full backup:\n got %q\nwant %q", got, want)
	}

	w.exec(t, e, "CREATE TABLE added (id INT PRIMARY KEY, price DECIMAL(10,2), at DATETIME(3))")
	w.exec(t, e, "SET SESSION sql_mode = ''; INSERT INTO added VALUES (1, 19.99, '2026-11-29 08:15:00.250'), "+
		"(2, -0.50, '0000-00-00 00:00:00'), (3, NULL, '2026-12-01 00:00:00'); SET SESSION sql_mode = DEFAULT")
	w.exec(t, e, "ALTER TABLE ints ADD COLUMN extra VARCHAR(5) NULL")
	w.exec(t, e, "UPDATE ints SET extra = 'x' WHERE id = ?", w.ints[0])
	e.waitCaughtUp(t)
	res := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	if res.Refused || res.FullBackup != "" || res.SnapshotID == "" {
		t.Fatalf("refresh across DDL: %+v", res)
	}

	q := "SELECT id, extra FROM app.ints ORDER BY id"
	if got, want := query(q), liveCSV("id,extra", "SELECT id, COALESCE(extra, '') FROM ints ORDER BY id"); got != want {
		t.Fatalf("%s after the refresh of the new shape:\n got %q\nwant %q", q, got, want)
	}
	q = `SELECT id, price, "at", typeof(price) AS tp, typeof("at") AS ta FROM app.added ORDER BY id`
	want := `id,price,at,tp,ta
1,19.99,2026-11-29 08:15:00.25,"DECIMAL(10,2)",TIMESTAMP
2,-0.50,,"DECIMAL(10,2)",TIMESTAMP
3,,2026-12-01 00:00:00,"DECIMAL(10,2)",TIMESTAMP
`
	if got := query(q); got != want {
		t.Fatalf("%s:\n got %q\nwant %q", q, got, want)
	}
	rewritten, err := os.Stat(viewsFile)
	must(t, err)
	if os.SameFile(first, rewritten) {
		t.Fatal("views.sql was not rewritten for the new shape")
	}
	checkViewsFile(t, e, viewsFile)

	// A refresh of the same shape leaves views.sql alone.
	w.step(t, e, 5)
	e.waitCaughtUp(t)
	if res := e.refresh(t, payload.RefreshInput{TableDeltas: true}); res.Refused || res.SnapshotID == "" {
		t.Fatalf("refresh after the new shape: %+v", res)
	}
	same, err := os.Stat(viewsFile)
	must(t, err)
	if !os.SameFile(rewritten, same) {
		t.Fatal("views.sql was rewritten although the shape did not change")
	}
	if got, want := query("SELECT count(*) AS n FROM app.ints"), liveCSV("n", "SELECT COUNT(*) FROM ints"); got != want {
		t.Fatalf("dbtrail query after the refresh:\n got %q\nwant %q", got, want)
	}
	replay(t, e, payload.RefreshWorkflowID("main"))
	replay(t, e, payload.FullBackupWorkflowID("main"))
}

// checkViewsFile loads views.sql into a new DuckDB, as `duckdb -init`
// does, and reads the new column and table.
func checkViewsFile(t *testing.T, e *backupEnv, path string) {
	t.Helper()
	text, err := os.ReadFile(path)
	must(t, err)
	duck, err := sql.Open("duckdb", "")
	must(t, err)
	defer duck.Close()
	duck.SetMaxOpenConns(1)
	for _, q := range []string{"SET memory_limit='256MB'", "SET threads=1", "SET temp_directory='" + t.TempDir() + "'", string(text)} {
		_, err := duck.ExecContext(e.ctx, q)
		must(t, err)
	}
	var n, extra int64
	must(t, duck.QueryRowContext(e.ctx, "SELECT count(*), count(extra) FROM app.ints").Scan(&n, &extra))
	var sum string
	must(t, duck.QueryRowContext(e.ctx, "SELECT sum(price)::VARCHAR FROM app.added").Scan(&sum))
	if extra != 1 || sum != "19.49" {
		t.Fatalf("views.sql: %d rows with %d extra, sum(price) %s; want 1 extra and 19.49", n, extra, sum)
	}
}

// liveLines returns the rows of a query on the source as comma-joined
// text lines.
func liveLines(t *testing.T, e *backupEnv, query string) []string {
	t.Helper()
	rows, err := e.src.QueryContext(e.ctx, query)
	must(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	must(t, err)
	var out []string
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		must(t, rows.Scan(ptrs...))
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = string(v)
		}
		out = append(out, strings.Join(parts, ","))
	}
	must(t, rows.Err())
	return out
}

// stderrOf returns the standard error an exec error carries.
func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
