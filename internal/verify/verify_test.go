package verify_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/sqlexport/exporttest"
	"github.com/dbtrail/dbtrail/internal/verify"
	"github.com/dbtrail/dbtrail/testsuite"
)

// verdicts verifies every table of snap and returns the results by name.
func verdicts(ctx context.Context, t *testing.T, db *sql.DB, snap *snapshot.Snapshot, opts verify.Options) map[string]verify.Result {
	t.Helper()
	out := map[string]verify.Result{}
	for _, mt := range snap.Manifest.Tables {
		res, err := verify.Table(ctx, db, snap, mt.Schema, mt.Table, opts)
		if err != nil {
			t.Fatalf("verify %s.%s: %v", mt.Schema, mt.Table, err)
		}
		out[res.Table] = res
	}
	return out
}

func expect(t *testing.T, res verify.Result, v verify.Verdict, reason string, diff ...string) {
	t.Helper()
	var got []string
	for _, d := range res.Diff {
		got = append(got, d.String())
	}
	if res.Verdict != v || !strings.Contains(res.Reason, reason) || fmt.Sprint(got) != fmt.Sprint(diff) {
		t.Errorf("%s: %s (%s), diff %q; want %s (…%s…), diff %q", res.Table, res.Verdict, res.Reason, got, v, reason, diff)
	}
}

func TestVerifyLiveSource(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	src := testsuite.StartSource(t)
	exporttest.Tables(ctx, t, src)
	if err := src.Exec(ctx, "CREATE TABLE fx.many (id INT PRIMARY KEY, v INT)",
		"INSERT INTO fx.many SELECT seq, seq FROM fx.seq_1_to_300"); err != nil {
		t.Fatal(err)
	}
	db, err := src.DB(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	snap := exporttest.BuildSnapshot(ctx, t, db, t.TempDir(), "main", []string{exporttest.Schema, exporttest.Schema2})

	// The same function over the live table, the table file and the writer.
	for _, mt := range snap.Manifest.Tables {
		r, err := snap.OpenTable(mt.Schema, mt.Table)
		if err != nil {
			t.Fatal(err)
		}
		sfp, err := verify.SnapshotFingerprint(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		lfp, pos, err := verify.LiveFingerprint(ctx, db, r.Table())
		if err != nil {
			t.Fatal(err)
		}
		if sfp != mt.Fingerprint || lfp != mt.Fingerprint || pos.File != snap.Manifest.Position.File || pos.Pos != snap.Manifest.Position.Pos {
			t.Errorf("%s.%s: live %s at %s, file %s, manifest %s at %s:%d", mt.Schema, mt.Table, lfp, pos, sfp, mt.Fingerprint,
				snap.Manifest.Position.File, snap.Manifest.Position.Pos)
		}
	}
	for _, res := range verdicts(ctx, t, db, snap, verify.Options{Explain: true}) {
		expect(t, res, verify.Match, "fingerprint")
	}

	// Changes the binlog does not see leave the position where the snapshot
	// was taken: a difference there is a mismatch, with the keys.
	if err := src.Exec(ctx, `SET SESSION sql_log_bin = 0;
		UPDATE fx.ckey SET v = 'changed' WHERE k = 'a' AND n = 1;
		INSERT INTO fx.ckey VALUES ('new', 5, 'x');
		DELETE FROM fx.ckey WHERE k = 'b''q';
		DELETE FROM fx.nokey WHERE a = 1 LIMIT 1;
		UPDATE fx.many SET v = v + 1;
		UPDATE fx.alltypes SET f = f * 2 WHERE id = 4;
		SET SESSION sql_log_bin = 1`); err != nil { // the pool keeps the connection
		t.Fatal(err)
	}
	res := verdicts(ctx, t, db, snap, verify.Options{Explain: true, MaxKeys: 5})
	expect(t, res["fx.ckey"], verify.Mismatch, "at the snapshot's own binlog position",
		`["a",1] values differ`, `["b'q",0] only in the snapshot`, `["new",5] only live`)
	expect(t, res["fx.nokey"], verify.Mismatch, "fingerprints differ: live 4:", `[1,"x"] 1 live rows, 2 in the snapshot`)
	expect(t, res["fx.alltypes"], verify.Mismatch, "own binlog position", "[4] values differ")
	expect(t, res["fx.many"], verify.Mismatch, "own binlog position", "[1] values differ", "[2] values differ",
		"[3] values differ", "[4] values differ", "[5] values differ")
	if res["fx.many"].DiffTotal != 300 {
		t.Errorf("fx.many: %d differing keys counted, want 300", res["fx.many"].DiffTotal)
	}
	expect(t, res["fx.odd name"], verify.Match, "2 rows")
	if r := res["fx.ckey"]; r.Live.Rows != 4 || r.Snap.Rows != 4 || r.Live == r.Snap {
		t.Errorf("fx.ckey fingerprints %s and %s", r.Live, r.Snap)
	}
	if r, _ := verify.Table(ctx, db, snap, "fx", "ckey", verify.Options{}); r.Verdict != verify.Mismatch || r.Diff != nil {
		t.Errorf("without explain: %+v", r)
	}

	// Once the binlog moves on, a difference is inconclusive: the table may
	// just have changed since the snapshot.
	if err := src.Exec(ctx, "UPDATE fx.alltypes SET i = i + 1 WHERE id = 1",
		"ALTER TABLE fx.empty ADD COLUMN x INT", "DROP TABLE fx2.other"); err != nil {
		t.Fatal(err)
	}
	res = verdicts(ctx, t, db, snap, verify.Options{Explain: true})
	expect(t, res["fx.alltypes"], verify.Inconclusive, "the live table moved on since the snapshot", "[1] values differ", "[4] values differ")
	expect(t, res["fx.ckey"], verify.Inconclusive, "index cannot bridge that window yet",
		`["a",1] values differ`, `["b'q",0] only in the snapshot`, `["new",5] only live`)
	expect(t, res["fx.empty"], verify.Inconclusive, "live columns (id, x) are not the snapshot's (id)")
	expect(t, res["fx2.other"], verify.Inconclusive, "fx2.other does not exist on the live server")
	expect(t, res["fx.odd name"], verify.Match, "2 rows")
	t.Logf("verify test body took %s", time.Since(start).Round(time.Millisecond))
}

func TestVerifyRefusesDamagedSnapshots(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	db, snap := exporttest.Fixture(ctx, t)

	broken := exporttest.CopySnapshot(t, snap, t.TempDir(), "main")
	exporttest.Truncate(t, broken, "fx", "alltypes", 1)
	_, err := verify.Table(ctx, db, broken, "fx", "alltypes", verify.Options{})
	var de *snapshot.DigestError
	if !errors.As(err, &de) || de.File != "fx/alltypes.parquet" || !strings.Contains(err.Error(), "manifest says") {
		t.Fatalf("verify of a truncated table file: %v, want a digest error", err)
	}
	if res, err := verify.Table(ctx, db, broken, "fx", "ckey", verify.Options{}); err != nil || res.Verdict != verify.Match {
		t.Fatalf("an intact table of the same snapshot: %+v, %v", res, err)
	}

	// A damaged chain file refuses its table before the live server is read
	// (here a closed pool, which any read would fail on).
	chained := exporttest.Chain(t, exporttest.CopySnapshot(t, snap, t.TempDir(), "main"))
	exporttest.TruncateFile(t, chained, "fx/alltypes.000001.posdel", 1)
	closed, err := sql.Open("mysql", "nobody@tcp(127.0.0.1:1)/")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	_, err = verify.Table(ctx, closed, chained, "fx", "alltypes", verify.Options{})
	if !errors.As(err, &de) || de.File != "fx/alltypes.000001.posdel" || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("verify of a table with a truncated chain file: %v, want a digest error", err)
	}
	if _, err := verify.Table(ctx, db, snap, "fx", "nope", verify.Options{}); err == nil {
		t.Fatal("a table the snapshot does not hold verified")
	}
}

func TestVerifyChain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	db, snap := exporttest.Fixture(ctx, t)
	chained := exporttest.Chain(t, exporttest.CopySnapshot(t, snap, t.TempDir(), "main"))
	work := filepath.Join(t.TempDir(), "work") // made by Table
	opts := verify.Options{Explain: true, TempDir: work}

	// Against the unchanged live tables, a chained table differs by exactly
	// the keys its chain changed.
	res := verdicts(ctx, t, db, chained, opts)
	expect(t, res["fx.ckey"], verify.Mismatch, "at the snapshot's own binlog position",
		`["a",1] values differ`, `["b'q",0] only live`, `["new",5] only in the snapshot`, `["😀",2] only live`)
	expect(t, res["fx.alltypes"], verify.Mismatch, "at the snapshot's own binlog position",
		"[1] only live", "[4] values differ", "[6] only in the snapshot")
	for _, name := range []string{"fx.nokey", "fx.odd name", "fx.empty"} {
		expect(t, res[name], verify.Match, "fingerprint")
	}
	if r := res["fx.ckey"]; r.Snap.Rows != 3 || r.Live.Rows != 4 {
		t.Errorf("fx.ckey: %d rows at the snapshot, %d live; want 3 and 4", r.Snap.Rows, r.Live.Rows)
	}
	if entries, err := os.ReadDir(work); err != nil || len(entries) != 0 {
		t.Errorf("scratch folders left in the temp dir: %v, %v", entries, err)
	}

	// Changed the same way, the live tables match the chained snapshot (and
	// no longer its table files).
	if _, err := db.ExecContext(ctx, exporttest.ChainLive); err != nil {
		t.Fatal(err)
	}
	res = verdicts(ctx, t, db, chained, opts)
	for _, r := range res {
		expect(t, r, verify.Match, "fingerprint")
	}
	if r := res["fx.alltypes"]; r.Snap.Rows != 5 {
		t.Errorf("fx.alltypes: %d rows at the snapshot, want 5", r.Snap.Rows)
	}
	if r, err := verify.Table(ctx, db, chained, "fx", "ckey", verify.Options{}); err != nil || r.Verdict != verify.Match {
		t.Errorf("without a temp dir: %+v, %v", r, err)
	}
	if r, err := verify.Table(ctx, db, snap, "fx", "ckey", verify.Options{}); err != nil || r.Verdict != verify.Mismatch {
		t.Errorf("the snapshot without the chain: %+v, %v", r, err)
	}

	// A live table of another shape still reports the fingerprint at the
	// snapshot.
	want := res["fx.ckey"].Snap
	if _, err := db.ExecContext(ctx, "SET SESSION sql_log_bin = 0; ALTER TABLE fx.ckey ADD COLUMN x INT; SET SESSION sql_log_bin = 1"); err != nil {
		t.Fatal(err)
	}
	r, err := verify.Table(ctx, db, chained, "fx", "ckey", opts)
	if err != nil || r.Snap != want {
		t.Fatalf("another shape: %+v, %v; want the snapshot fingerprint %s", r, err, want)
	}
	expect(t, r, verify.Mismatch, "live columns (k, n, v, x) are not the snapshot's (k, n, v)")
}
