package e2e

import (
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/payload"
)

// TestGeneratedColumns takes tables with STORED and VIRTUAL generated
// columns (mydumper leaves them out of its INSERTs; the binlog carries their
// values) through a full backup, a refresh by pair and by rewrite, and a
// keyless table's full rewrite: snapshots store the other columns only, read
// back equal to the live table, keep the generated columns' definitions in
// Derived, and a .sql export loads into a scratch server, where the server
// computes the generated columns again, and verifies against it and the
// live source.
func TestGeneratedColumns(t *testing.T) {
	e := newBackupEnv(t)
	for _, q := range []string{
		`CREATE TABLE gen (id INT PRIMARY KEY, a INT, s INT AS (a * 2) STORED, v VARCHAR(20) AS (CONCAT('v-', a)) VIRTUAL,
		  note VARCHAR(10), p BIGINT AS (id * 1000 + a) PERSISTENT)`,
		`INSERT INTO gen (id, a, note) VALUES (1, 10, ''), (2, NULL, 'x'), (3, 30, NULL)`,
		`CREATE TABLE genbag (a INT, b VARCHAR(5), l INT AS (LENGTH(b)) VIRTUAL)`,
		`INSERT INTO genbag (a, b) VALUES (1, 'ab'), (1, 'ab'), (2, NULL)`,
	} {
		_, err := e.src.ExecContext(e.ctx, q)
		must(t, err)
	}
	e.waitCaughtUp(t)
	e.fullBackup(t)
	snap := e.current(t)
	mt, _ := snap.Manifest.Table("app", "gen")
	foot, err := snapshot.ReadFooter(snap.Path(mt.File))
	must(t, err)
	if got := strings.Join(foot.Table.ColumnNames(), ","); got != "id,a,note" || len(foot.Table.Derived) != 3 {
		t.Fatalf("gen stored as %s, derived %+v", got, foot.Table.Derived)
	}
	for _, table := range []string{"gen", "genbag"} {
		compareTable(t, e, snap, table)
	}
	checkExportVerify(t, e, snap)

	eng := newEngine(t)
	for _, q := range []string{
		`UPDATE gen SET a = 11 WHERE id = 1`, `UPDATE gen SET a = 5, note = '' WHERE id = 2`,
		`DELETE FROM gen WHERE id = 3`, `INSERT INTO gen (id, a) VALUES (4, 40)`,
		`DELETE FROM genbag WHERE a = 1 LIMIT 1`, `INSERT INTO genbag (a, b) VALUES (3, 'xyz')`,
	} {
		_, err := e.src.ExecContext(e.ctx, q)
		must(t, err)
	}
	e.waitCaughtUp(t)
	res := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	if res.Refused {
		t.Fatalf("refresh refused: %v", res.Reasons)
	}
	snap = e.current(t)
	if mt, _ := snap.Manifest.Table("app", "gen"); mt.Origin != snapshot.OriginPair {
		t.Fatalf("gen: origin %s, want a pair", mt.Origin)
	}
	checkLive(t, e, eng, snap, "pair")
	checkExportVerify(t, e, snap)

	_, err = e.src.ExecContext(e.ctx, `UPDATE gen SET a = a + 1`)
	must(t, err)
	e.waitCaughtUp(t)
	if res := e.refresh(t, payload.RefreshInput{TableDeltas: false}); res.Refused {
		t.Fatalf("refresh refused: %v", res.Reasons)
	}
	snap = e.current(t)
	if mt, _ := snap.Manifest.Table("app", "gen"); mt.Origin != snapshot.OriginRewritten {
		t.Fatalf("gen: origin %s, want rewritten", mt.Origin)
	}
	checkLive(t, e, eng, snap, "rewrite")
	checkExportVerify(t, e, snap)
}
