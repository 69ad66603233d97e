package e2e

import (
	"bytes"
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"
	sdktest "go.temporal.io/sdk/testsuite"

	"github.com/dbtrail/dbtrail/calls"
	"github.com/dbtrail/dbtrail/internal/dumpconv"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/verify"
)

// floatTables creates tables whose FLOAT values need more than the 6
// significant digits mydumper writes: one with a primary key (made exact),
// one keyed by a UNIQUE index, and FLOAT(M,D) (printed with D decimals).
func floatTables(t *testing.T, e *backupEnv) {
	t.Helper()
	for _, q := range []string{
		`CREATE TABLE fl (id INT PRIMARY KEY, f FLOAT, g FLOAT NULL, md FLOAT(12,4), s VARCHAR(10))`,
		`INSERT INTO fl SELECT seq, seq * 1.2345678, IF(seq % 7 = 0, NULL, 1 / seq), seq * 3.14159265, CONCAT('r', seq) FROM seq_1_to_3000`,
		`INSERT INTO fl VALUES (-1, 3.40282e38, 1.17549435e-38, 0, 'edge'), (-2, -0.000123456789, 16777217, -1.5, 'x'), (-3, 0.1, 0, 0, NULL)`,
		`CREATE TABLE flu (a VARCHAR(10) NOT NULL, b INT NOT NULL, f FLOAT NOT NULL, UNIQUE KEY ab (a, b))`,
		`INSERT INTO flu SELECT CONCAT('k', seq % 10), seq, seq / 3 FROM seq_1_to_500`,
	} {
		_, err := e.src.ExecContext(e.ctx, q)
		must(t, err)
	}
}

// TestFullBackupExactFloat: FLOAT values a dump carries with 6 significant
// digits come back exact in a full backup (read from the source in a
// consistent snapshot), so the snapshot equals the live tables and verify
// matches.
func TestFullBackupExactFloat(t *testing.T) {
	e := newBackupEnv(t)
	floatTables(t, e)
	for _, q := range []string{
		`CREATE TABLE flk (a INT, f FLOAT)`,
		`INSERT INTO flk SELECT seq, seq * 1.1111111 FROM seq_1_to_20`,
		`INSERT INTO flk VALUES (21, 0.5), (22, 2.2222222), (22, 2.2222222)`,
	} {
		_, err := e.src.ExecContext(e.ctx, q)
		must(t, err)
	}
	res := e.fullBackup(t)
	if res.Rows != 3003+500+23 || len(res.FloatsAsDumped) != 1 || !strings.Contains(res.FloatsAsDumped[0], "app.flk") {
		t.Fatalf("result %+v", res)
	}
	snap, err := snapshot.OpenCurrent(filepath.Join(e.acts.BackupDir, "main"))
	must(t, err)
	must(t, snap.VerifyAll())
	for _, table := range []string{"fl", "flu"} {
		compareExact(t, e, snap, table)
		v, err := verify.Table(e.ctx, e.src, snap, "app", table, verify.Options{Explain: true})
		must(t, err)
		if v.Verdict != verify.Match {
			t.Fatalf("verify app.%s: %s (%s) %v", table, v.Verdict, v.Reason, v.Diff)
		}
	}
	// The table without a key keeps the dump's digits: verify --explain
	// names the cause of each differing row.
	v, err := verify.Table(e.ctx, e.src, snap, "app", "flk", verify.Options{Explain: true})
	must(t, err)
	// 9 and 18 times 1.1111111 are float32 10 and 20, 0.5 is exact: 19
	// keys (a key being the whole row, the rows equal twice are one).
	if v.Verdict != verify.Mismatch || v.DiffTotal != 19 {
		t.Fatalf("verify app.flk: %s (%s), %d differing keys %v; want a mismatch in 19 keys", v.Verdict, v.Reason, v.DiffTotal, v.Diff)
	}
	for _, d := range v.Diff {
		if d.Live != d.Snap || d.Cause != "FLOAT column f: "+verify.FloatCause {
			t.Fatalf("verify app.flk: %s, want the FLOAT cause", d)
		}
	}
	t.Logf("verify app.flk: %s; %s", v.Reason, v.Diff[len(v.Diff)-1])
	replay(t, e, "fullbackup-main")
}

// compareExact requires the snapshot's rows of app.table to be the live
// rows, FLOAT columns read exactly (CAST(f AS DOUBLE)).
func compareExact(t *testing.T, e *backupEnv, snap *snapshot.Snapshot, table string) {
	t.Helper()
	r, err := snap.OpenTable("app", table)
	must(t, err)
	def := r.Table()
	r.Close()
	if err := sameRows(snapshotImages(t, snap, table), exactRows(t, e.src, def)); err != nil {
		t.Fatalf("app.%s: %v", table, err)
	}
}

// exactRows reads def's live rows as images, FLOAT columns as DOUBLE.
func exactRows(t *testing.T, db *sql.DB, def *schema.Table) map[string]int {
	t.Helper()
	cols := make([]string, len(def.Columns))
	for i, c := range def.Columns {
		cols[i] = "`" + c.Name + "`"
		if c.Type == "float" {
			cols[i] = "CAST(" + cols[i] + " AS DOUBLE)"
		}
	}
	rows, err := db.Query("SELECT " + strings.Join(cols, ",") + " FROM `" + def.Schema + "`.`" + def.Name + "`")
	must(t, err)
	defer rows.Close()
	out := map[string]int{}
	raw := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	for rows.Next() {
		must(t, rows.Scan(ptrs...))
		vals := make([]rowimage.Cell, len(raw))
		for i, r := range raw {
			vals[i] = rowimage.RawCell(bytes.Clone(r))
		}
		img, err := rowimage.SQLImage(def, vals)
		must(t, err)
		out[string(img)]++
	}
	must(t, rows.Err())
	return out
}

// TestExactFloatsBridgesChangesAfterTheDump runs the backup's activities
// one by one and changes FLOAT rows between the dump and ExactFloats'
// consistent snapshot: updates, deletes, inserts, a key moved, a row deleted
// and inserted again. The snapshot must hold the rows as they were at the
// dump, exactly: the changed rows' values come from the index. Then a change
// the binlog does not see (sql_log_bin=0) makes the source's value one the
// dumped text is not a rounding of: ConvertTable must refuse the table,
// naming the key, not store the value.
func TestExactFloatsBridgesChangesAfterTheDump(t *testing.T) {
	e := newBackupEnv(t, withoutWorker())
	floatTables(t, e)
	var suite sdktest.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(e.acts)
	run := func(act, in, out any) error {
		t.Helper()
		v, err := env.ExecuteActivity(act, in)
		if err != nil {
			return err
		}
		return v.Get(out)
	}

	var alloc calls.AllocateSnapshotResult
	must(t, run(e.acts.AllocateSnapshot, calls.AllocateSnapshotInput{Source: "main"}, &alloc))
	var dump calls.DumpResult
	must(t, run(e.acts.Dump, calls.DumpInput{Source: "main", SnapshotID: alloc.SnapshotID}, &dump))
	defs := map[string]*schema.Table{}
	want := map[string]map[string]int{}
	for _, ref := range dump.Tables {
		def, _, err := dumpconv.Definition(os.DirFS(dump.Dir), ref.Schema, ref.Table, ref.SchemaFile)
		must(t, err)
		defs[ref.Table], want[ref.Table] = def, exactRows(t, e.src, def)
	}
	for _, q := range []string{
		`UPDATE fl SET f = f * 3, g = 2.7182818 WHERE id BETWEEN 1 AND 50`,
		`DELETE FROM fl WHERE id BETWEEN 51 AND 60`,
		`INSERT INTO fl VALUES (9001, 1.7654321, 0.3333333, 1, 'new')`,
		`UPDATE fl SET id = 9100 WHERE id = 61`,
		`UPDATE fl SET f = 0.1 WHERE id = 62`,
		`UPDATE fl SET f = 9.8765432 WHERE id = 62`,
		`DELETE FROM fl WHERE id = 63`,
		`INSERT INTO fl VALUES (63, 6.2831853, NULL, 2, 'again')`,
		`UPDATE flu SET f = f + 1 WHERE a = 'k1'`,
	} {
		_, err := e.src.ExecContext(e.ctx, q)
		must(t, err)
	}
	var mapped calls.MapPositionResult
	must(t, run(e.acts.MapPosition, calls.MapPositionInput{Source: "main", Position: dump.Position}, &mapped))
	var floats calls.ExactFloatsResult
	must(t, run(e.acts.ExactFloats, calls.ExactFloatsInput{Source: "main", DumpDir: dump.Dir, Tables: dump.Tables, Position: mapped.Position}, &floats))
	if len(floats.AsDumped) != 0 {
		t.Fatalf("tables left as dumped: %v", floats.AsDumped)
	}
	var tables []calls.ConvertTableResult
	for i, ref := range dump.Tables {
		if floats.Files[i] == "" {
			t.Fatalf("%s has no fix file", ref.Table)
		}
		var res calls.ConvertTableResult
		must(t, run(e.acts.ConvertTable, calls.ConvertTableInput{Source: "main", SnapshotID: alloc.SnapshotID, DumpDir: dump.Dir,
			Table: ref, Position: mapped.Position, Floats: floats.Files[i]}, &res))
		tables = append(tables, res)
	}
	var pub calls.PublishResult
	must(t, run(e.acts.Publish, calls.PublishInput{Source: "main", SnapshotID: alloc.SnapshotID, Position: mapped.Position, Tables: tables}, &pub))
	snap, err := snapshot.OpenCurrent(filepath.Join(e.acts.BackupDir, "main"))
	must(t, err)
	for table, rows := range want {
		if err := sameRows(snapshotImages(t, snap, table), rows); err != nil {
			t.Fatalf("app.%s is not the table at the dump: %v", table, err)
		}
	}

	// A change the index does not hold: the source's exact value is not
	// what the dump rounded.
	must(t, run(e.acts.AllocateSnapshot, calls.AllocateSnapshotInput{Source: "main"}, &alloc))
	must(t, run(e.acts.Dump, calls.DumpInput{Source: "main", SnapshotID: alloc.SnapshotID}, &dump))
	must(t, e.source.Exec(e.ctx, "SET SESSION sql_log_bin = 0; UPDATE app.fl SET f = f + 1 WHERE id = 5"))
	must(t, run(e.acts.MapPosition, calls.MapPositionInput{Source: "main", Position: dump.Position}, &mapped))
	must(t, run(e.acts.ExactFloats, calls.ExactFloatsInput{Source: "main", DumpDir: dump.Dir, Tables: dump.Tables, Position: mapped.Position}, &floats))
	for i, ref := range dump.Tables {
		if ref.Table != "fl" {
			continue
		}
		var res calls.ConvertTableResult
		err := run(e.acts.ConvertTable, calls.ConvertTableInput{Source: "main", SnapshotID: alloc.SnapshotID, DumpDir: dump.Dir,
			Table: ref, Position: mapped.Position, Floats: floats.Files[i]}, &res)
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || app.NonRetryable() != true || !strings.Contains(err.Error(), "column f") || !strings.Contains(err.Error(), "key [5]") {
			t.Fatalf("converting app.fl with a value changed outside the binlog: %v; want a non-retryable error naming key [5] and column f", err)
		}
		t.Log(err)
	}
}

// snapshotImages reads app.table of snap as row images.
func snapshotImages(t *testing.T, snap *snapshot.Snapshot, table string) map[string]int {
	t.Helper()
	r, err := snap.OpenTable("app", table)
	must(t, err)
	defer r.Close()
	got := map[string]int{}
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return got
		}
		must(t, err)
		img, err := rowimage.SQLImage(r.Table(), row)
		must(t, err)
		got[string(img)]++
	}
}
