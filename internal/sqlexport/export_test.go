package sqlexport_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/sqlexport"
	"github.com/dbtrail/dbtrail/internal/sqlexport/exporttest"
	"github.com/dbtrail/dbtrail/internal/verify"
	"github.com/dbtrail/dbtrail/testsuite"
)

const bigRows = 50000

// exportFile writes an export of snap (opts) to a new file and returns it.
func exportFile(t *testing.T, snap *snapshot.Snapshot, opts sqlexport.Options) (string, sqlexport.Stats) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "export.sql")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	st, err := sqlexport.SnapshotContext(context.Background(), f, snap, opts)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exported %d tables, %d rows, %d statements, %d bytes in %s", st.Tables, st.Rows, st.Statements, st.Bytes, time.Since(start).Round(time.Millisecond))
	return p, st
}

// checkStatements checks that every INSERT line of the file is one complete
// statement within max bytes (';' included), except single-row statements of
// the tables named in oversize (quoted), and that the file ends with the
// complete marker.
func checkStatements(t *testing.T, path string, max int, oversize ...string) (inserts int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	last := ""
	for sc.Scan() {
		line := sc.Text()
		last = line
		if !strings.HasPrefix(line, "INSERT INTO ") {
			continue
		}
		inserts++
		if !strings.HasSuffix(line, ");") {
			t.Errorf("INSERT line does not end with ');': %.80s…", line)
		}
		if len(line) > max {
			allowed := false
			for _, o := range oversize {
				allowed = allowed || strings.HasPrefix(line, "INSERT INTO "+o+" ")
			}
			if !allowed {
				t.Errorf("statement of %d bytes over the cap %d: %.80s…", len(line), max, line)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(last, sqlexport.CompleteMarker) {
		t.Errorf("last line %q is not the complete marker", last)
	}
	return inserts
}

func TestExportLoadsIntoMariaDBAndVerifies(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	src := testsuite.StartSource(t)
	scratch := testsuite.StartIndex(t) // writes no binlog: a difference there is a mismatch
	exporttest.Tables(ctx, t, src)
	if err := src.Exec(ctx,
		"CREATE TABLE fx.big (id INT PRIMARY KEY, v VARCHAR(100), d DOUBLE, b BLOB, ts TIMESTAMP(6) NULL)",
		`INSERT INTO fx.big SELECT seq, CONCAT('row-', seq, '''"\\;),(', CHAR(10)), seq/7, REPEAT(X'00', seq % 50),
			FROM_UNIXTIME(seq * 1000 + 0.000001) FROM fx.seq_1_to_50000`,
		"CREATE TABLE fx.huge (id INT PRIMARY KEY, b LONGBLOB)",
		"INSERT INTO fx.huge VALUES (1, REPEAT(X'AB', 100000)), (2, X'01')",
	); err != nil {
		t.Fatal(err)
	}
	db, err := src.DB(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	backup := t.TempDir()
	snap := exporttest.BuildSnapshot(ctx, t, db, backup, "main", []string{exporttest.Schema, exporttest.Schema2})

	const max = 16 << 10
	file, st := exportFile(t, snap, sqlexport.Options{MaxStatementBytes: max})
	var wantRows int64
	for _, mt := range snap.Manifest.Tables {
		wantRows += mt.Rows
	}
	if st.Tables != len(snap.Manifest.Tables) || st.Rows != wantRows || st.Oversize != 2 || st.LargestStatement < 300000 {
		t.Fatalf("stats %+v, want %d tables, %d rows, 2 oversize statements (alltypes row 3, huge row 1)", st, len(snap.Manifest.Tables), wantRows)
	}
	if n := checkStatements(t, file, max, "`huge`", "`alltypes`"); n != st.Statements || n < 100 {
		t.Fatalf("%d INSERT lines, stats say %d (a 50k-row table under a 16 KiB cap needs many)", n, st.Statements)
	}

	exporttest.LoadSQL(t, scratch, "", file)
	sdb, err := scratch.DB(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	var n int
	if err := sdb.QueryRowContext(ctx, "SELECT COUNT(*) FROM fx.big").Scan(&n); err != nil || n != bigRows {
		t.Fatalf("fx.big holds %d rows after loading (%v), want %d", n, err, bigRows)
	}
	verifyAll := func(what string) {
		t.Helper()
		for _, mt := range snap.Manifest.Tables {
			res, err := verify.Table(ctx, sdb, snap, mt.Schema, mt.Table, verify.Options{Explain: true})
			if err != nil {
				t.Fatalf("%s: verify %s.%s: %v", what, mt.Schema, mt.Table, err)
			}
			if res.Verdict != verify.Match {
				t.Errorf("%s: %s: %s %s; differing keys %v", what, res.Table, res.Verdict, res.Reason, res.Diff)
			}
		}
	}
	verifyAll("snapshot export loaded")

	// One table exported alone loads into a database chosen by the client.
	if err := scratch.Exec(ctx, "DELETE FROM fx.alltypes WHERE id = 3", "UPDATE fx.alltypes SET vc = 'x' WHERE id = 5"); err != nil {
		t.Fatal(err)
	}
	res, err := verify.Table(ctx, sdb, snap, "fx", "alltypes", verify.Options{Explain: true})
	if err != nil || res.Verdict != verify.Mismatch || !strings.Contains(res.Reason, "writes no binlog") ||
		len(res.Diff) != 2 || res.Diff[0].String() != "[3] only in the snapshot" || res.Diff[1].String() != "[5] values differ" {
		t.Fatalf("after damaging the loaded copy: %+v, %v", res, err)
	}
	r, err := snap.OpenTable("fx", "alltypes")
	if err != nil {
		t.Fatal(err)
	}
	one := filepath.Join(t.TempDir(), "alltypes.sql")
	f, err := os.Create(one)
	if err != nil {
		t.Fatal(err)
	}
	tst, err := sqlexport.Table(f, r, sqlexport.Options{})
	r.Close()
	f.Close()
	if err != nil || tst.Tables != 1 || tst.Rows != 5 || tst.Statements != 1 {
		t.Fatalf("table export: %+v, %v", tst, err)
	}
	exporttest.LoadSQL(t, scratch, "fx", one)
	verifyAll("after loading one table again")
}

func TestExportRefusesDamagedSnapshots(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, snap := exporttest.Fixture(ctx, t)

	broken := exporttest.CopySnapshot(t, snap, t.TempDir(), "main")
	exporttest.Truncate(t, broken, "fx", "ckey", 100)
	_, err := sqlexport.Snapshot(&strings.Builder{}, broken, sqlexport.Options{})
	var de *snapshot.DigestError
	if !errors.As(err, &de) || de.File != "fx/ckey.parquet" {
		t.Fatalf("export of a truncated table file: %v, want a digest error for fx/ckey.parquet", err)
	}
	var out strings.Builder
	if _, err := sqlexport.Snapshot(&out, broken, sqlexport.Options{Tables: []string{"fx.nokey"}}); err != nil {
		t.Fatalf("an intact table of the same snapshot: %v", err)
	}
	if _, err := sqlexport.Snapshot(&out, broken, sqlexport.Options{Tables: []string{"fx.nope"}}); err == nil || !strings.Contains(err.Error(), `no table "fx.nope"`) {
		t.Fatalf("unknown table: %v", err)
	}

	// A damaged chain file refuses its table.
	chained := exporttest.Chain(t, exporttest.CopySnapshot(t, snap, t.TempDir(), "main"))
	exporttest.TruncateFile(t, chained, "fx/ckey.000002.upserts", 1)
	_, err = sqlexport.Snapshot(&out, chained, sqlexport.Options{Tables: []string{"fx.ckey"}})
	if !errors.As(err, &de) || de.File != "fx/ckey.000002.upserts" || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("export of a table with a truncated chain file: %v, want a digest error for fx/ckey.000002.upserts", err)
	}
	if _, err := sqlexport.Snapshot(&out, chained, sqlexport.Options{Tables: []string{"fx.alltypes"}}); err != nil {
		t.Fatalf("an intact chained table of the same snapshot: %v", err)
	}
	if _, err := sqlexport.Snapshot(&out, snap, sqlexport.Options{MaxStatementBytes: 100}); err == nil {
		t.Fatal("a 100-byte statement cap accepted")
	}
}

// checksums returns CHECKSUM TABLE of each table on srv.
func checksums(ctx context.Context, t *testing.T, srv *testsuite.Server, tables ...string) map[string]int64 {
	t.Helper()
	db, err := srv.DB(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]int64{}
	for _, tbl := range tables {
		var name string
		var sum sql.NullInt64
		if err := db.QueryRowContext(ctx, "CHECKSUM TABLE "+tbl).Scan(&name, &sum); err != nil || !sum.Valid {
			t.Fatalf("CHECKSUM TABLE %s: %v (valid %v)", tbl, err, sum.Valid)
		}
		out[tbl] = sum.Int64
	}
	return out
}

func TestExportChain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	src := testsuite.StartSource(t)
	scratch := testsuite.StartIndex(t)
	exporttest.Tables(ctx, t, src)
	db, err := src.DB(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	snap := exporttest.BuildSnapshot(ctx, t, db, t.TempDir(), "main", []string{exporttest.Schema, exporttest.Schema2})
	chained := exporttest.Chain(t, exporttest.CopySnapshot(t, snap, t.TempDir(), "main"))

	work := filepath.Join(t.TempDir(), "work") // made by the export
	const max = 16 << 10
	file, st := exportFile(t, chained, sqlexport.Options{MaxStatementBytes: max, TempDir: work})
	var wantRows int64
	for _, mt := range snap.Manifest.Tables {
		wantRows += mt.Rows
	}
	wantRows-- // fx.ckey: 4 rows in its table file, 3 at the snapshot
	if st.Tables != len(snap.Manifest.Tables) || st.Rows != wantRows {
		t.Fatalf("stats %+v, want %d tables, %d rows", st, len(snap.Manifest.Tables), wantRows)
	}
	checkStatements(t, file, max, "`alltypes`")
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "-- table fx.ckey: at the snapshot, from a table file of 4 rows") {
		t.Errorf("no comment line for the chained table fx.ckey")
	}
	if entries, err := os.ReadDir(work); err != nil || len(entries) != 0 {
		t.Errorf("scratch folders left in the temp dir: %v, %v", entries, err)
	}

	// Loaded, the export is the table at the snapshot: it verifies against
	// the chained snapshot and equals the source changed the same way.
	exporttest.LoadSQL(t, scratch, "", file)
	sdb, err := scratch.DB(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	for _, mt := range chained.Manifest.Tables {
		res, err := verify.Table(ctx, sdb, chained, mt.Schema, mt.Table, verify.Options{Explain: true, TempDir: work})
		if err != nil || res.Verdict != verify.Match {
			t.Errorf("%s.%s loaded: %+v, %v", mt.Schema, mt.Table, res, err)
		}
	}
	if _, err := db.ExecContext(ctx, exporttest.ChainLive); err != nil {
		t.Fatal(err)
	}
	tables := []string{"fx.ckey", "fx.alltypes", "fx.nokey", "fx2.other"}
	live, loaded := checksums(ctx, t, src, tables...), checksums(ctx, t, scratch, tables...)
	for _, tbl := range tables {
		if live[tbl] != loaded[tbl] {
			t.Errorf("%s: CHECKSUM TABLE %d on the source, %d loaded from the export", tbl, live[tbl], loaded[tbl])
		}
	}
	var keys []string
	rows, err := sdb.QueryContext(ctx, "SELECT CONCAT(k, ':', n, ':', COALESCE(v, 'NULL')) FROM fx.ckey ORDER BY k, n")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if got := strings.Join(keys, " "); got != "a:1:changed a:18446744073709551615:max new:5:again" {
		t.Errorf("fx.ckey loaded: %s", got)
	}
}
