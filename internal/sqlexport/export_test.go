package sqlexport_test

import (
	"bufio"
	"context"
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
	st, err := sqlexport.Snapshot(f, snap, opts)
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

	chained := exporttest.AddChainEntry(t, exporttest.CopySnapshot(t, snap, t.TempDir(), "main"), "fx", "nokey")
	out.Reset()
	_, err = sqlexport.Snapshot(&out, chained, sqlexport.Options{})
	var ce *sqlexport.ChainError
	if !errors.As(err, &ce) || ce.Table != "fx.nokey" || len(ce.Entries) != 2 || !strings.Contains(err.Error(), "not built yet") {
		t.Fatalf("export of a table with a chain: %v", err)
	}
	if out.Len() != 0 {
		t.Fatalf("a refused chain still wrote %d bytes", out.Len())
	}
	if _, err := sqlexport.Snapshot(&out, chained, sqlexport.Options{MaxStatementBytes: 100}); err == nil {
		t.Fatal("a 100-byte statement cap accepted")
	}
}
