package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/when"
	"github.com/dbtrail/dbtrail/payload"
)

// TestMomentCreateTableAfterFoldedChange: a moment between an ALTER that
// the refresh folds (a column added with a default and a comment, an
// index) and the refresh after it is rebuilt through the table's lineage;
// once that refresh is published, the moment's CREATE TABLE is the
// source's own text (its default, comment and index), taken from the
// refresh's table file, not one rendered from the column list.
func TestMomentCreateTableAfterFoldedChange(t *testing.T) {
	e := newBackupEnv(t)
	eng := newEngine(t)
	e.exec(t, "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, a VARCHAR(10))")
	e.exec(t, "INSERT INTO t SELECT seq, CONCAT('a', seq) FROM seq_1_to_20")
	e.fullBackup(t)
	e.exec(t, "ALTER TABLE t ADD COLUMN note VARCHAR(20) NOT NULL DEFAULT 'x' COMMENT 'kept note', ADD INDEX ia (a)")
	e.exec(t, "INSERT INTO t (id, a) VALUES (21, 'a21')")
	at, want := momentAfterChange(t, e)

	createAt := func() (string, moment.TablePlan) { return createTableAt(t, e, eng, at) }
	before, tp := createAt()
	if tp.Lineage == nil || tp.CreateFrom != "" {
		t.Fatalf("before the refresh: plan %+v; want a folded lineage and no later snapshot", tp)
	}
	if strings.Contains(before, "kept note") {
		t.Fatalf("before the refresh the CREATE TABLE cannot know the comment, yet: %s", before)
	}
	res := e.refresh(t, payload.RefreshInput{Source: "main", TableDeltas: true})
	if res.Refused || res.SnapshotID == "" {
		t.Fatalf("refresh: %+v", res)
	}
	got, tp := createAt()
	if tp.Lineage == nil || tp.CreateFrom != res.SnapshotID {
		t.Fatalf("CreateFrom %q; want the refresh's snapshot %s", tp.CreateFrom, res.SnapshotID)
	}
	for _, part := range []string{"DEFAULT 'x'", "COMMENT 'kept note'", "KEY `ia`"} {
		if !strings.Contains(got, part) {
			t.Fatalf("CREATE TABLE at %s lacks %s:\n%s\nthe source's:\n%s", at, part, got, want)
		}
	}
	t.Logf("CREATE TABLE at %s:\n%s", at, got)
}

// TestMomentCreateTableAfterMetadataChange: a moment after an ALTER that
// changes the table's definition alone (an index, a default) reads the
// snapshot's rows with the definition at the moment in the plan: its
// CREATE TABLE (what `export sql --at` writes) has the index, rendered
// until a refresh past the moment publishes the source's own text, then
// that text.
func TestMomentCreateTableAfterMetadataChange(t *testing.T) {
	e := newBackupEnv(t)
	eng := newEngine(t)
	e.exec(t, "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, a VARCHAR(10))")
	e.exec(t, "INSERT INTO t SELECT seq, CONCAT('a', seq) FROM seq_1_to_20")
	e.fullBackup(t)
	e.exec(t, "ALTER TABLE t ADD INDEX ia (a), ALTER COLUMN a SET DEFAULT 'z'")
	e.exec(t, "INSERT INTO t (id) VALUES (21)")
	at, want := momentAfterChange(t, e)

	createAt := func() (string, moment.TablePlan) { return createTableAt(t, e, eng, at) }
	before, tp := createAt()
	if tp.Lineage != nil || tp.Def == nil || tp.CreateFrom != "" {
		t.Fatalf("before the refresh: plan %+v; want the definition at the moment, no lineage, no later snapshot", tp)
	}
	if !strings.Contains(before, "KEY `ia`") {
		t.Fatalf("before the refresh the CREATE TABLE lacks the index: %s", before)
	}
	res := e.refresh(t, payload.RefreshInput{Source: "main", TableDeltas: true})
	if res.Refused || res.SnapshotID == "" {
		t.Fatalf("refresh: %+v", res)
	}
	got, tp := createAt()
	if tp.Def == nil || tp.CreateFrom != res.SnapshotID {
		t.Fatalf("CreateFrom %q; want the refresh's snapshot %s", tp.CreateFrom, res.SnapshotID)
	}
	if got != want {
		t.Fatalf("CREATE TABLE at %s:\n%s\nthe source's then:\n%s", at, got, want)
	}
}

// momentAfterChange records the source's position now as a moment and
// app.t's CREATE TABLE there, then commits one more row so that a refresh
// cuts after the moment, and waits for capture.
func momentAfterChange(t *testing.T, e *backupEnv) (at, create string) {
	t.Helper()
	var file string
	var pos uint64
	var a, b any
	must(t, e.src.QueryRowContext(e.ctx, "SHOW MASTER STATUS").Scan(&file, &pos, &a, &b))
	must(t, e.src.QueryRowContext(e.ctx, "SHOW CREATE TABLE t").Scan(new(string), &create))
	e.exec(t, "INSERT INTO t (id, a) VALUES (22, 'a22')") // the refresh's cut is after the moment
	e.waitCaughtUp(t)
	return fmt.Sprintf("%s:%d", file, pos), create
}

// createTableAt rebuilds app.t at moment at (the seam export --at reads)
// and returns its CREATE TABLE and plan.
func createTableAt(t *testing.T, e *backupEnv, eng *fold.Engine, at string) (string, moment.TablePlan) {
	t.Helper()
	pa, err := when.Parse(at)
	must(t, err)
	cat := moment.LocalCatalog{SourceDir: filepath.Join(e.acts.BackupDir, "main")}
	plan, err := moment.PlanAt(e.ctx, e.store, e.store, cat, "main", pa, moment.Selection{Tables: []string{"app.t"}})
	must(t, err)
	rb := moment.Rebuilder{Source: "main", Engine: eng, Events: moment.IndexEvents{Store: e.store}, Catalog: cat}
	tb, err := rb.Open(e.ctx, plan.Tables[0], nil)
	must(t, err)
	defer tb.Close()
	return tb.Footer.CreateTable, plan.Tables[0]
}
