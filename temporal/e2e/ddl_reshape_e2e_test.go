package e2e

import (
	"fmt"
	"testing"

	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/payload"
)

// TestRefreshReshapesColumns: the traps of added defaults (” and NULL, a
// DECIMAL, a DATETIME, an ENUM, a BIT, a column FIRST), a dropped column, a
// renamed column, a widened one, and a new primary key, each beside row
// changes before and after it. A moment right after each statement, read
// through the old snapshot and the index (time travel across the folded
// change), equals the table as it was then; the refresh publishes without
// a full backup and equals the source.
func TestRefreshReshapesColumns(t *testing.T) {
	e := newBackupEnv(t)
	exec := func(qs ...string) { e.execAll(t, qs...) }
	exec(`CREATE TABLE shapes (id INT PRIMARY KEY, v VARCHAR(10), n INT, d DECIMAL(10,2), u INT NOT NULL)`,
		`INSERT INTO shapes SELECT seq, CONCAT('v', seq), seq, seq / 3, seq FROM seq_1_to_200`)
	e.fullBackup(t)
	eng, err := fold.Open(e.ctx, fold.Options{TempDir: t.TempDir()})
	must(t, err)
	defer eng.Close()
	type moment struct {
		at    string
		truth map[string]int
	}
	var moments []moment
	mark := func(step string) {
		t.Helper()
		var file string
		var pos uint64
		var a, b any
		must(t, e.src.QueryRowContext(e.ctx, "SHOW MASTER STATUS").Scan(&file, &pos, &a, &b))
		e.waitCaughtUp(t)
		moments = append(moments, moment{at: fmt.Sprintf("%s:%d", file, pos), truth: liveCounts(t, e, liveDef(t, e, "shapes"))})
		t.Logf("%s: moment %s", step, moments[len(moments)-1].at)
	}
	steps := [][]string{
		{"UPDATE shapes SET n = n + 1 WHERE id <= 20",
			`ALTER TABLE shapes ADD COLUMN s_empty VARCHAR(5) NOT NULL DEFAULT '', ADD COLUMN s_null VARCHAR(5) NULL,
			   ADD COLUMN d2 DECIMAL(10,2) DEFAULT 1.5, ADD COLUMN dt DATETIME(3) DEFAULT '2020-01-02 03:04:05',
			   ADD COLUMN e ENUM('x','y') NOT NULL DEFAULT 'y', ADD COLUMN b BIT(5) DEFAULT b'101',
			   ADD COLUMN first_col INT NOT NULL DEFAULT 7 FIRST`},
		{"INSERT INTO shapes (id, v, n, d, u, s_null, e, b) VALUES (1001, 'new', 1, 2.25, 1001, 'x', 'x', b'1')",
			"ALTER TABLE shapes DROP COLUMN v, RENAME COLUMN n TO n2, MODIFY d DECIMAL(14,2), MODIFY u BIGINT NOT NULL"},
		{"UPDATE shapes SET n2 = -n2 WHERE id BETWEEN 30 AND 40",
			"ALTER TABLE shapes DROP PRIMARY KEY, ADD PRIMARY KEY (u)",
			"DELETE FROM shapes WHERE u BETWEEN 50 AND 55"},
	}
	for i, qs := range steps {
		exec(qs...)
		mark(fmt.Sprintf("step %d", i+1))
	}
	for _, m := range moments {
		got, plan, err := rebuild(t, e, eng, m.at, "shapes")
		if err != nil {
			t.Fatalf("moment %s: %v", m.at, err)
		}
		if err := sameRows(got, m.truth); err != nil {
			t.Fatalf("moment %s (lineage %+v): %v", m.at, plan.Tables[0].Lineage, err)
		}
	}
	res := e.refresh(t, payload.RefreshInput{TableDeltas: true})
	if res.Refused || res.FullBackup != "" || res.SnapshotID == "" {
		t.Fatalf("refresh: refused %v, full backup %q: %q", res.Refused, res.FullBackup, res.Reasons)
	}
	t.Logf("decisions: %q", res.Tables)
	checkLive(t, e, eng, e.current(t), "after the reshapes")
	// Moments before the refresh still read from the older snapshot.
	got, _, err := rebuild(t, e, eng, moments[0].at, "shapes")
	must(t, err)
	if err := sameRows(got, moments[0].truth); err != nil {
		t.Fatalf("first moment after the refresh: %v", err)
	}
}
