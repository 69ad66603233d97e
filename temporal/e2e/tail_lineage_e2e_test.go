package e2e

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/views"
)

// TestTailFollowsCreatedRenamedDropped: after the snapshot, tables are
// created (plain, LIKE, … SELECT), renamed (and written under the new
// name) and dropped. The live tail stays live: its views list exactly the
// source's tables at the cut, each with the source's rows, and a dropped
// or renamed-away table has no view.
func TestTailFollowsCreatedRenamedDropped(t *testing.T) {
	e := newBackupEnv(t)
	for _, q := range []string{
		"CREATE TABLE ta (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO ta SELECT seq, CONCAT('a', seq) FROM seq_1_to_50",
		"CREATE TABLE tb (id INT PRIMARY KEY, n BIGINT)",
		"INSERT INTO tb SELECT seq, seq * 10 FROM seq_1_to_40",
		"CREATE TABLE tc (id INT PRIMARY KEY, n INT)",
		"INSERT INTO tc SELECT seq, seq FROM seq_1_to_30",
	} {
		e.exec(t, q)
	}
	e.fullBackup(t)
	for _, q := range []string{
		"CREATE TABLE tn (id INT PRIMARY KEY, s VARCHAR(10) NOT NULL DEFAULT 'x')",
		"INSERT INTO tn (id) VALUES (1), (2), (3)",
		"UPDATE tn SET s = 'y' WHERE id = 2",
		"CREATE TABLE ts (PRIMARY KEY (id)) SELECT id, n FROM tb WHERE id <= 20",
		"RENAME TABLE ta TO ta2",
		"INSERT INTO ta2 VALUES (51, 'new')",
		"DELETE FROM ta2 WHERE id = 1",
		"DROP TABLE tc",
		"CREATE TABLE tl LIKE tb",
		"INSERT INTO tl SELECT * FROM tb WHERE id < 5",
		"INSERT INTO tb VALUES (41, 410)",
	} {
		e.exec(t, q)
	}
	e.waitCaughtUp(t)

	o := views.SessionOptions{Options: views.Options{SourceDir: filepath.Join(e.acts.BackupDir, "main"), Raw: true},
		MemoryLimit: "256MB", Threads: 1}
	s, st := openTailSession(t, e.ctx, o, moment.Past{Source: "main", Index: e.store, SourceDir: o.SourceDir})
	defer s.Close()
	if !st.Live {
		t.Fatalf("the tail fell back: %s", st)
	}
	var names []string
	for _, ref := range s.Tables() {
		if ref.Schema == "app" {
			names = append(names, ref.Table)
		}
	}
	srcRows, err := e.src.QueryContext(e.ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'app'")
	must(t, err)
	live, err := rowTexts(srcRows)
	must(t, err)
	slices.Sort(names)
	if !slices.Equal(names, live) {
		t.Fatalf("views of app at the cut: %v; the source has %v", names, live)
	}
	for _, tb := range live {
		got, _, err := s.Query(e.ctx, "SELECT * FROM app."+tb)
		must(t, err)
		gotRows, err := rowTexts(got)
		must(t, err)
		want, err := e.src.QueryContext(e.ctx, "SELECT * FROM `"+tb+"`")
		must(t, err)
		wantRows, err := rowTexts(want)
		must(t, err)
		if !slices.Equal(gotRows, wantRows) {
			t.Fatalf("app.%s through the tail: %d rows %v; the source has %d rows %v", tb, len(gotRows), head(gotRows), len(wantRows), head(wantRows))
		}
	}
	for _, gone := range []string{"ta", "tc"} {
		if rows, _, err := s.Query(e.ctx, "SELECT * FROM app."+gone); err == nil {
			rows.Close()
			t.Fatalf("app.%s has a view at the cut; it was renamed or dropped after the snapshot", gone)
		}
	}
	t.Logf("tail: %s; tables %v", st, names)
}
