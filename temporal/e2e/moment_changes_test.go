package e2e

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/sqlexport/exporttest"
	"github.com/dbtrail/dbtrail/payload"
)

// TestMomentChangesExport: the changes of a range over the every-type
// table (inserts of its edge rows, an update to other edge values, a key
// change, a delete) and a table altered inside the range are exported by
// the Export workflow; read back, every file's changes equal the index's
// events of the range (count, seq, op, keys, commit time, GTID, position,
// and before and after images byte for byte); the altered table has one
// file per shape, in order; DuckDB reads typed columns. Bad input (an
// unknown table, a moment that does not parse, an output that exists, a
// range ending after the checkpoint) fails the export with its reason and
// writes nothing.
func TestMomentChangesExport(t *testing.T) {
	e := newBackupEnv(t)
	create, rows := exporttest.AllTypesTable()
	session := "SET SESSION sql_mode = ''; SET time_zone = '+00:00'; USE app; "
	must(t, e.source.Exec(e.ctx,
		session+create,
		session+"INSERT INTO alltypes VALUES "+rows[0],
		"CREATE TABLE app.plain (id INT PRIMARY KEY, v VARCHAR(10))",
		"INSERT INTO app.plain VALUES (1, 'a')",
	))
	e.waitCaughtUp(t)
	cols := liveDef(t, e, "alltypes").ColumnNames()
	from := sleepToNextSecond().UTC().Format("2006-01-02 15:04:05")
	var set []string
	for _, c := range cols[1:] {
		set = append(set, fmt.Sprintf("t.`%s` = s.`%s`", c, c))
	}
	must(t, e.source.Exec(e.ctx,
		session+"INSERT INTO alltypes VALUES "+strings.Join(rows[1:], ","),
		session+"UPDATE alltypes t JOIN (SELECT * FROM alltypes WHERE id = 4) s SET "+strings.Join(set, ", ")+" WHERE t.id = 3",
		session+"UPDATE alltypes SET id = 50 WHERE id = 5",
		session+"DELETE FROM alltypes WHERE id = 2",
		"UPDATE app.plain SET v = 'b'",
		"ALTER TABLE app.plain ADD COLUMN w INT NULL",
		"UPDATE app.plain SET w = 7",
		"INSERT INTO app.plain VALUES (2, 'c', 8)",
	))
	e.waitCaughtUp(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "changes")
	res, err := e.export(t, payload.ExportSpec{Format: payload.ExportChanges, From: from, Until: "latest", Out: out})
	must(t, err)
	r := res.Plan.Range
	if r == nil || len(res.Tables) != 2 {
		t.Fatalf("export: %+v", res)
	}
	t.Logf("range (%d, %d]: from %s until %s", r.From.Seq, r.Until.Seq, r.From, r.Until)
	files := map[string][]string{}
	for _, tb := range res.Tables {
		for _, f := range tb.Files {
			files[tb.Table] = append(files[tb.Table], f.Path)
		}
	}
	if len(files["alltypes"]) != 1 || strings.Join(files["plain"], " ") != "app/plain.000001.parquet app/plain.000002.parquet" {
		t.Fatalf("files: %v", files)
	}
	for _, tb := range []string{"alltypes", "plain"} {
		var want []change.Event
		must(t, e.store.WindowEvents(e.ctx, "main", "app", tb, r.From.Seq, r.Until.Seq, func(ev change.Event) error {
			want = append(want, ev)
			return nil
		}))
		var got []snapshot.Change
		var shapes []int
		for _, rel := range files[tb] {
			def, err := snapshot.ReadChanges(filepath.Join(out, rel), func(c snapshot.Change) error {
				got = append(got, c)
				return nil
			})
			must(t, err)
			shapes = append(shapes, len(def.Columns))
		}
		if len(got) != len(want) || len(want) == 0 {
			t.Fatalf("%s: %d changes exported, the index has %d in the range", tb, len(got), len(want))
		}
		for i, w := range want {
			g := got[i]
			if g.Seq != w.Seq || g.Op != byte(w.Op) || g.PK != w.PK || g.PKBefore != w.PKBefore || !g.CommitTime.Equal(w.CommitTime) ||
				g.GTID != w.GTID || g.BinlogFile != w.BinlogFile || g.EndPos != w.EndPos ||
				!bytes.Equal(g.Before, w.Before) || !bytes.Equal(g.After, w.After) || (g.Before == nil) != (w.Before == nil) || (g.After == nil) != (w.After == nil) {
				t.Fatalf("%s change %d:\n got %+v\n     before %s\n     after  %s\nwant %+v\n     before %s\n     after  %s",
					tb, i, g, g.Before, g.After, w, w.Before, w.After)
			}
		}
		t.Logf("%s: %d changes in %d files (columns per shape %v) equal the index's events", tb, len(got), len(files[tb]), shapes)
		if tb == "plain" && (shapes[0] != 2 || shapes[1] != 3) {
			t.Fatalf("plain's shapes: %v", shapes)
		}
	}
	// DuckDB reads the values typed, without parsing.
	duck, err := sql.Open("duckdb", "")
	must(t, err)
	defer duck.Close()
	var biu, dtm, ct, bl, ops string
	must(t, duck.QueryRowContext(e.ctx, fmt.Sprintf(`SELECT any_value(typeof(after_biu)), any_value(typeof(after_dtm6)), any_value(typeof(commit_time)), any_value(typeof(after_bl)),
		string_agg(op, ',' ORDER BY seq) FROM '%s/app/alltypes.*.parquet'`, out)).Scan(&biu, &dtm, &ct, &bl, &ops))
	if biu != "UBIGINT" || dtm != "VARCHAR" || ct != "TIMESTAMP WITH TIME ZONE" || bl != "BLOB" || ops != "insert,insert,insert,insert,update,update,delete" {
		t.Fatalf("DuckDB sees %s %s %s %s, ops %s", biu, dtm, ct, bl, ops)
	}
	var maxU string
	must(t, duck.QueryRowContext(e.ctx, fmt.Sprintf(`SELECT max(after_biu)::VARCHAR FROM '%s/app/alltypes.*.parquet'`, out)).Scan(&maxU))
	if maxU != "18446744073709551615" {
		t.Fatalf("max after_biu %s", maxU)
	}

	// Bad input: the reason, and nothing under the output name.
	badOut := filepath.Join(dir, "bad")
	for _, c := range []struct {
		spec payload.ExportSpec
		kind string
		has  string
	}{
		{payload.ExportSpec{Format: payload.ExportParquet, At: "latest", Tables: []string{"app.nope"}, Out: badOut}, payload.ErrBadInput, "app.nope"},
		{payload.ExportSpec{Format: payload.ExportParquet, At: "yesterday at noon", Out: badOut}, payload.ErrBadInput, "yesterday at noon"},
		{payload.ExportSpec{Format: payload.ExportChanges, From: from, Until: "latest", Tables: []string{"app.nope"}, Out: badOut}, payload.ErrBadInput, "app.nope"},
		{payload.ExportSpec{Format: payload.ExportChanges, From: from, Until: "latest", Out: out}, payload.ErrBadInput, "exists"},
		{payload.ExportSpec{Format: payload.ExportSQL, At: time.Now().Add(time.Hour).UTC().Format(time.DateTime), Out: badOut}, payload.ErrPositionNotCovered, "not captured yet"},
		{payload.ExportSpec{Format: payload.ExportSQL, At: "latest", Out: filepath.Join(dir, "no-such-dir", "x.sql")}, payload.ErrBadInput, "does not exist"},
	} {
		_, err := e.export(t, c.spec)
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || app.Type() != c.kind || !strings.Contains(err.Error(), c.has) {
			t.Fatalf("%+v: want %s naming %q, got %v", c.spec, c.kind, c.has, err)
		}
		t.Logf("refused as expected: %s", app.Error())
		if _, err := os.Stat(badOut); !os.IsNotExist(err) {
			t.Fatalf("%+v: %s exists after a failed export", c.spec, badOut)
		}
	}
	ents, err := os.ReadDir(dir)
	must(t, err)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("the output folder holds %v: a failed export left something", names)
	}
}
