package e2e

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
)

// TestRefreshFoldsSchemaChanges: one window holds every kind of schema
// change the fold proves, each beside row changes of the same table in both
// orders; the refresh that follows publishes without a full backup (no
// FullBackup run, the refresh's result names none), every table of the new
// snapshot equals the live one, the snapshot lists exactly the live tables,
// and a table whose index changed records the source's new CREATE TABLE.
// On the code before issue 32 the refresh was refused and a full backup
// ran in its place.
func TestRefreshFoldsSchemaChanges(t *testing.T) {
	e := newBackupEnv(t)
	exec := func(qs ...string) { e.execAll(t, qs...) }
	for _, n := range []string{"idx", "addcol", "ren", "trunc", "gone", "swap_a", "swap_b", "retrunc", "rekeep", "rekeepidle"} {
		exec("CREATE TABLE "+n+" (id INT PRIMARY KEY, v VARCHAR(20), n INT)",
			"INSERT INTO "+n+" SELECT seq, CONCAT('"+n+"-', seq), seq FROM seq_1_to_300")
	}
	e.fullBackup(t)
	exec(
		// metadata only, rows changed before and after
		"UPDATE idx SET n = n + 1 WHERE id <= 10",
		"CREATE INDEX by_v ON idx (v)",
		"DELETE FROM idx WHERE id BETWEEN 20 AND 25",
		// a column added: rows before keep NULL, rows after carry it
		"UPDATE addcol SET v = 'before' WHERE id <= 5",
		"ALTER TABLE addcol ADD COLUMN note VARCHAR(20) NULL",
		"UPDATE addcol SET note = 'after' WHERE id BETWEEN 3 AND 8",
		"INSERT INTO addcol VALUES (1001, 'new', 1, 'x')",
		// renamed, then written under its new name
		"UPDATE ren SET n = 0 WHERE id = 1",
		"RENAME TABLE ren TO ren2",
		"INSERT INTO ren2 VALUES (1001, 'renamed', 1)",
		// truncated, then filled again in the same window
		"UPDATE trunc SET n = -1",
		"TRUNCATE TABLE trunc",
		"INSERT INTO trunc VALUES (1, 'again', 1), (2, 'again', 2)",
		// reshaped, then truncated and filled again: the reshape's rows are gone
		"ALTER TABLE retrunc MODIFY n BIGINT",
		"UPDATE retrunc SET n = n + 1 WHERE id <= 3",
		"TRUNCATE TABLE retrunc",
		"INSERT INTO retrunc VALUES (7, 'again', 7)",
		// reshaped, then an index added: the rows land in the newer definition
		"ALTER TABLE rekeep MODIFY n BIGINT",
		"CREATE INDEX by_n ON rekeep (n)",
		"UPDATE rekeep SET n = -n WHERE id <= 3",
		// the same with no row change after: the reshape is written once,
		// straight into the final file, in the newer definition
		"ALTER TABLE rekeepidle MODIFY n BIGINT",
		"CREATE INDEX by_n ON rekeepidle (n)",
		// dropped
		"DROP TABLE gone",
		// swapped through a third name
		"UPDATE swap_a SET v = 'was a'",
		"RENAME TABLE swap_a TO swap_t, swap_b TO swap_a, swap_t TO swap_b",
		"UPDATE swap_a SET n = n * 2 WHERE id <= 3",
		// created empty and filled; created from a SELECT of many rows
		"CREATE TABLE fresh (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO fresh VALUES (1, 'one'), (2, 'two')",
		"CREATE TABLE copied (id INT PRIMARY KEY, v VARCHAR(20), n INT) SELECT id, v, n FROM idx",
	)
	e.waitCaughtUp(t)
	res := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	if res.Refused || res.FullBackup != "" || res.SnapshotID == "" {
		t.Fatalf("refresh: refused %v, full backup %q, snapshot %q: %q", res.Refused, res.FullBackup, res.SnapshotID, res.Reasons)
	}
	t.Logf("decisions:\n%s", strings.Join(res.Tables, "\n"))
	snap := e.current(t)
	var got []string
	for _, mt := range snap.Manifest.Tables {
		got = append(got, mt.Table)
	}
	want := []string{"addcol", "copied", "fresh", "idx", "rekeep", "rekeepidle", "ren2", "retrunc", "swap_a", "swap_b", "trunc"}
	if slices.Sort(got); !slices.Equal(got, want) {
		t.Fatalf("snapshot tables %v, want %v", got, want)
	}
	eng, err := fold.Open(e.ctx, fold.Options{TempDir: t.TempDir()})
	must(t, err)
	defer eng.Close()
	checkLive(t, e, eng, snap, "after the schema changes")
	mt, _ := snap.Manifest.Table("app", "idx")
	if !strings.Contains(mt.CreateTable, "by_v") || mt.Origin == snapshot.OriginRewritten {
		t.Fatalf("idx: origin %s, CREATE TABLE %q: want its files kept and the new index recorded", mt.Origin, mt.CreateTable)
	}
	for _, name := range []string{"rekeep", "rekeepidle"} {
		rk, _ := snap.Manifest.Table("app", name)
		foot, err := snapshot.ReadFooter(snap.Path(rk.File))
		must(t, err)
		if !slices.ContainsFunc(foot.Table.Indexes, func(ix schema.Index) bool { return ix.Name == "by_n" }) {
			t.Fatalf("%s: indexes %+v: want by_n, added after its reshape", name, foot.Table.Indexes)
		}
	}
	// The next refresh links forward what did not change again.
	exec("INSERT INTO fresh VALUES (3, 'three')")
	e.waitCaughtUp(t)
	if res := e.refresh(t, payload.RefreshInput{TableDeltas: true}); res.Refused || res.FullBackup != "" {
		t.Fatalf("second refresh: %+v", res)
	}
	checkLive(t, e, eng, e.current(t), "the refresh after")
}

// TestRefreshRedumpsOnlyUnprovenTables: a type change that converts values
// (and a DEFAULT CURRENT_TIMESTAMP column) cannot be folded; the refresh
// re-dumps those two tables alone (a partial full backup: mydumper reads
// only them), folds them forward to its cut with every other table folded
// as usual, publishes, equals the source, and removes the partial
// snapshot. No FullBackup runs.
func TestRefreshRedumpsOnlyUnprovenTables(t *testing.T) {
	e := newBackupEnv(t)
	exec := func(qs ...string) { e.execAll(t, qs...) }
	for _, n := range []string{"conv", "stamp", "plain"} {
		exec("CREATE TABLE "+n+" (id INT PRIMARY KEY, v VARCHAR(20), n INT)",
			"INSERT INTO "+n+" SELECT seq, seq * 2, seq FROM seq_1_to_500")
	}
	e.fullBackup(t)
	exec("UPDATE conv SET n = 0 WHERE id <= 10",
		"ALTER TABLE conv MODIFY v INT",
		"UPDATE conv SET v = v + 1 WHERE id <= 20",
		"ALTER TABLE stamp ADD COLUMN at DATETIME DEFAULT CURRENT_TIMESTAMP",
		"UPDATE plain SET n = -n WHERE id <= 50")
	e.waitCaughtUp(t)
	// Writes continue while the re-dump runs: the refresh folds them too.
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		i := 0
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			i++
			if _, err := e.src.ExecContext(e.ctx, "UPDATE conv SET n = n + 1 WHERE id = ?", 1+i%500); err != nil {
				done <- err
				return
			}
			if _, err := e.src.ExecContext(e.ctx, "UPDATE plain SET n = n + 1 WHERE id = ?", 1+i%500); err != nil {
				done <- err
				return
			}
		}
	}()
	res := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	close(stop)
	must(t, <-done)
	if res.Refused || res.FullBackup != "" || res.Redump == nil {
		t.Fatalf("refresh: refused %v, full backup %q, redump %+v: %q", res.Refused, res.FullBackup, res.Redump, res.Reasons)
	}
	if got := res.Redump.Tables; !slices.Equal(got, []string{"app.conv", "app.stamp"}) || res.Redump.Rows != 1000 {
		t.Fatalf("re-dumped %v (%d rows), want app.conv and app.stamp (1000 rows)", got, res.Redump.Rows)
	}
	t.Logf("decisions:\n%s", strings.Join(res.Tables, "\n"))
	// The refresh's cut is before the writes that followed it: refresh again
	// with traffic paused, then compare.
	e.waitCaughtUp(t)
	if r2 := e.refresh(t, payload.RefreshInput{TableDeltas: true}); r2.Refused || r2.FullBackup != "" || r2.Redump != nil {
		t.Fatalf("second refresh: %+v", r2)
	}
	eng, err := fold.Open(e.ctx, fold.Options{TempDir: t.TempDir()})
	must(t, err)
	defer eng.Close()
	checkLive(t, e, eng, e.current(t), "after the re-dump")
	if left, _ := filepath.Glob(filepath.Join(e.acts.BackupDir, "main", ".partial", "*")); len(left) != 0 {
		t.Fatalf("partial snapshots left: %v", left)
	}
	// Only the one full backup of the test ran.
	n := 0
	it := e.c.GetWorkflowHistory(e.ctx, payload.FullBackupWorkflowID("main"), "", false, 0)
	for it.HasNext() {
		if _, err := it.Next(); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no full backup history")
	}
}
