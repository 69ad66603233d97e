package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMomentCLI runs the dbtrail binary: `history` lists every version of
// a row across a key change, as text and as JSON lines, and refuses an
// unknown table and a key that does not parse; `export parquet --at` and
// `views --at` start the Export workflow, wait, and print the cut; a
// moment that does not parse is refused before anything starts.
func TestMomentCLI(t *testing.T) {
	bin := buildDbtrail(t)
	e := newBackupEnv(t)
	w := newWorkload(9)
	for _, q := range []string{
		"CREATE TABLE acct (id INT PRIMARY KEY, owner VARCHAR(20), balance DECIMAL(10,2))",
		"INSERT INTO acct VALUES (1, 'ann', 10.00), (7, 'bob', 1.00)",
	} {
		w.exec(t, e, q)
	}
	e.waitCaughtUp(t)
	e.fullBackup(t)
	for _, q := range []string{
		"UPDATE acct SET balance = 12.50 WHERE id = 1",
		"UPDATE acct SET id = 2 WHERE id = 1",
		"UPDATE acct SET owner = 'ann b' WHERE id = 2",
		"DELETE FROM acct WHERE id = 2",
		"INSERT INTO acct VALUES (1, 'carl', 0.00)",
	} {
		w.exec(t, e, q)
	}
	e.waitCaughtUp(t)
	dbtrail := func(args ...string) (string, string, error) {
		cmd := exec.CommandContext(e.ctx, bin, args...)
		cmd.Env = append(os.Environ(), "DBTRAIL_INDEX_DSN="+e.indexDSN)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), err
	}
	out, _, err := dbtrail("history", "app.acct", "--key", "2")
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	t.Logf("history of app.acct key 2:\n%s", out)
	var ops []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "seq ") {
			ops = append(ops, strings.Fields(l)[5])
		}
	}
	// key 2's row began as key 1: its insert and update come first; key 1's
	// later row (carl) is another row.
	if strings.Join(ops, ",") != "insert,update,update,update,delete" || !strings.Contains(out, "(was [1])") || !strings.Contains(out, `"owner":"ann b"`) {
		t.Fatalf("history of key 2: %v\n%s", ops, out)
	}
	out, _, err = dbtrail("history", "app.acct", "--key", "[1]", "--json")
	if err != nil {
		t.Fatalf("history --json: %v", err)
	}
	var versions []historyVersion
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var v historyVersion
		must(t, json.Unmarshal(sc.Bytes(), &v))
		versions = append(versions, v)
	}
	if len(versions) != 6 || versions[0].Op != "insert" || versions[5].Op != "insert" || string(versions[5].Key) != "[1]" ||
		!strings.Contains(string(versions[1].After), `"balance":"12.50"`) || versions[0].GTID == "" {
		t.Fatalf("history --json of key 1: %s", out)
	}
	for _, c := range []struct {
		args []string
		has  string
	}{
		{[]string{"history", "app.nope", "--key", "1"}, "unknown table app.nope"},
		{[]string{"history", "app.acct", "--key", "abc"}, `key "abc" of app.acct does not parse`},
		{[]string{"history", "app.acct", "--key", "[1,2]"}, "2 values for the 1 key columns"},
		{[]string{"export", "parquet", "--at", "soon", "--out", filepath.Join(t.TempDir(), "x")}, `moment "soon"`},
	} {
		_, errOut, err := dbtrail(c.args...)
		if err == nil || !strings.Contains(errOut, c.has) {
			t.Fatalf("%v: exit %v, stderr %q; want it to name %q", c.args, err, errOut, c.has)
		}
	}

	dir := t.TempDir()
	out, errOut, err := dbtrail("export", "parquet", "--at", "latest", "--temporal-addr", e.frontend, "--table", "app.acct", "--out", filepath.Join(dir, "p"))
	if err != nil {
		t.Fatalf("export parquet: %v\n%s", err, errOut)
	}
	if !strings.Contains(out, "cut: transaction GTID") || !strings.Contains(out, "1 tables, 2 rows") {
		t.Fatalf("export parquet printed:\n%s", out)
	}
	out, errOut, err = dbtrail("views", "--at", "latest", "--temporal-addr", e.frontend, "--export-dir", filepath.Join(dir, "v"))
	if err != nil {
		t.Fatalf("views --at: %v\n%s", err, errOut)
	}
	views, err := os.ReadFile(filepath.Join(dir, "v", "views.sql"))
	must(t, err)
	if !strings.Contains(string(views), `CREATE OR REPLACE VIEW "app"."acct"`) {
		t.Fatalf("views.sql:\n%s", views)
	}
	checkExportViews(t, e, filepath.Join(dir, "v", "views.sql"), "app", "acct", 2)
}

// checkExportViews loads views.sql into DuckDB and counts a view's rows.
func checkExportViews(t *testing.T, e *backupEnv, file, schemaName, table string, want int) {
	t.Helper()
	b, err := os.ReadFile(file)
	must(t, err)
	duck := openDuck(t)
	_, err = duck.ExecContext(e.ctx, string(b))
	must(t, err)
	var n int
	must(t, duck.QueryRowContext(e.ctx, `SELECT count(*) FROM "`+schemaName+`"."`+table+`"`).Scan(&n))
	if n != want {
		t.Fatalf("view %s.%s: %d rows, want %d", schemaName, table, n, want)
	}
}
