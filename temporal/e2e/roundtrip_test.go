package e2e

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/sqlexport"
	"github.com/dbtrail/dbtrail/internal/sqlexport/exporttest"
	"github.com/dbtrail/dbtrail/internal/verify"
	"github.com/dbtrail/dbtrail/internal/views"
	"github.com/dbtrail/dbtrail/testsuite"
)

// checkViews generates the raw views (the stored text forms) for the backup
// and reads every table through DuckDB: row counts, and for the tables given
// every row as text, must equal the live source. The typed views are
// checked against the source in internal/views.
func checkViews(t *testing.T, e *backupEnv, snap *snapshot.Snapshot, exact map[string]string) {
	t.Helper()
	sourceDir := filepath.Join(e.acts.BackupDir, "main")
	refs, err := views.TablesFromSnapshot(snap.Dir)
	must(t, err)
	var buf strings.Builder
	must(t, views.Write(&buf, views.Options{SourceDir: sourceDir, Raw: true}, refs))
	duck, err := sql.Open("duckdb", "")
	must(t, err)
	defer duck.Close()
	duck.SetMaxOpenConns(1)
	for _, q := range []string{"SET memory_limit='512MB'", "SET threads=2", "SET temp_directory='" + t.TempDir() + "'", buf.String()} {
		_, err := duck.ExecContext(e.ctx, q)
		must(t, err)
	}
	for _, r := range refs {
		var viewRows, liveRows int64
		must(t, duck.QueryRowContext(e.ctx, fmt.Sprintf(`SELECT count(*) FROM "%s"."%s"`, r.Schema, r.Table)).Scan(&viewRows))
		must(t, e.src.QueryRowContext(e.ctx, fmt.Sprintf("SELECT COUNT(*) FROM `%s`.`%s`", r.Schema, r.Table)).Scan(&liveRows))
		if viewRows != liveRows {
			t.Fatalf("view %s.%s has %d rows, live %d", r.Schema, r.Table, viewRows, liveRows)
		}
	}
	for table, cols := range exact {
		q := "SELECT concat_ws('|', " + cols + ") AS r FROM %s"
		a := rowsText(t, e, duck, fmt.Sprintf(q, `"app"."`+table+`"`))
		b := rowsText(t, e, e.src, strings.ReplaceAll(fmt.Sprintf(q, "app.`"+table+"`"), "concat_ws", "CONCAT_WS"))
		// Collations differ between the engines: compare sorted in Go.
		sort.Strings(a)
		sort.Strings(b)
		if len(a) != len(b) {
			t.Fatalf("%s: DuckDB %d rows, MariaDB %d", table, len(a), len(b))
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s row %d: DuckDB %q, MariaDB %q", table, i, a[i], b[i])
			}
		}
	}
}

func rowsText(t *testing.T, e *backupEnv, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.QueryContext(e.ctx, q)
	must(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s sql.NullString
		must(t, rows.Scan(&s))
		out = append(out, s.String)
	}
	must(t, rows.Err())
	return out
}

// checkExportVerify exports the snapshot as .sql, loads it into a scratch
// MariaDB with the mariadb client and verifies both the scratch copy and the
// live source against the snapshot: every table must match.
func checkExportVerify(t *testing.T, e *backupEnv, snap *snapshot.Snapshot) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "export.sql")
	f, err := os.Create(file)
	must(t, err)
	if _, err := sqlexport.Snapshot(f, snap, sqlexport.Options{}); err != nil {
		t.Fatal(err)
	}
	must(t, f.Close())
	scratch := testsuite.StartIndex(t)
	exporttest.LoadSQL(t, scratch, "", file)
	scratchDB, err := scratch.DB(e.ctx, "")
	must(t, err)
	defer scratchDB.Close()
	for _, mt := range snap.Manifest.Tables {
		for name, db := range map[string]*sql.DB{"scratch copy": scratchDB, "live source": e.src} {
			res, err := verify.Table(e.ctx, db, snap, mt.Schema, mt.Table, verify.Options{Explain: true})
			must(t, err)
			if res.Verdict != verify.Match {
				t.Fatalf("verify %s.%s against the %s: %s (%s) %+v", mt.Schema, mt.Table, name, res.Verdict, res.Reason, res.Diff)
			}
		}
	}
}
