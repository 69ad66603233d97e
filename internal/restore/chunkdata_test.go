package restore

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/testsuite"
)

// sliceRows is a RowReader over rows.
type sliceRows struct{ rows [][]rowimage.Cell }

func (s *sliceRows) Next() ([]rowimage.Cell, error) {
	if len(s.rows) == 0 {
		return nil, io.EOF
	}
	r := s.rows[0]
	s.rows = s.rows[1:]
	return r, nil
}

func (s *sliceRows) Close() error { return nil }

// cells is a row of vals, "<null>" for NULL.
func cells(vals ...string) []rowimage.Cell {
	out := make([]rowimage.Cell, len(vals))
	for i, v := range vals {
		if v == "<null>" {
			out[i] = rowimage.Cell{Null: true}
		} else {
			out[i] = rowimage.Cell{Text: []byte(v)}
		}
	}
	return out
}

// TestLoadChunkData loads chunks with LOAD DATA LOCAL INFILE into a real
// MariaDB: bytes, YEAR 0, NULL, the text \N and the word NULL load exactly; a chunk that
// meets a duplicate key fails and leaves nothing (a LOCAL load would skip
// the row); with local_infile off the target is seen to refuse it, and a
// chunk tried anyway is errLoadDataRefused, not a failure.
func TestLoadChunkData(t *testing.T) {
	srv := testsuite.StartTarget(t, 72)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(srv.Exec(ctx, "CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY, b VARBINARY(10), y YEAR, s VARCHAR(20) CHARACTER SET latin1, g INT AS (id * 2) STORED)",
		"INSERT INTO app.t (id) VALUES (5)"))
	db, err := srv.DB(ctx, "")
	must(err)
	defer db.Close()
	def := &schema.Table{Schema: "app", Name: "t", Columns: []schema.Column{{Name: "id", Type: "int"}, {Name: "b", Type: "varbinary", Length: 10},
		{Name: "y", Type: "year"}, {Name: "s", Type: "varchar", Length: 20, Charset: "latin1"}}}
	data, err := NewLoadData(def)
	must(err)
	conn, release, err := session(ctx, db, false)
	must(err)
	defer release()
	if !localInfile(ctx, conn) {
		t.Fatal("the target's local_infile is on, but the loader sees it off")
	}
	l := &loader{job: Job{RestoreID: "r1", Schema: "app", Name: "t", Load: "t"}, data: data}
	load := func(rows ...[]rowimage.Cell) (int, error) {
		tx, err := conn.BeginTx(ctx, nil)
		must(err)
		defer tx.Rollback()
		n, _, err := l.loadChunkData(ctx, tx, &sliceRows{rows: rows}, nil, 100)
		if err != nil {
			return n, err
		}
		return n, tx.Commit()
	}

	if n, err := load(cells("1", "\x00\t\n\\\xff", "0", "café\ttab\\N"), cells("2", "<null>", "2026", "<null>"), cells("3", "", "<null>", "NULL"), cells("9", `\N`, "0", `\N`)); err != nil || n != 4 {
		t.Fatalf("load: %d rows, %v", n, err)
	}
	var got []string
	rows, err := db.QueryContext(ctx, "SELECT CONCAT_WS('|', id, COALESCE(HEX(b), 'null'), COALESCE(y + 0, 'null'), COALESCE(HEX(s), 'null'), g) FROM app.t WHERE id <> 5 ORDER BY id")
	must(err)
	for rows.Next() {
		var s string
		must(rows.Scan(&s))
		got = append(got, s)
	}
	must(rows.Err())
	want := []string{"1|00090A5CFF|0|636166E9097461625C4E|2", "2|null|2026|null|4", "3||null|4E554C4C|6", "9|5C4E|0|5C4E|18"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("loaded %q, want %q", got, want)
	}

	if n, err := load(cells("4", "a", "1999", "x"), cells("5", "b", "1999", "dup"), cells("6", "c", "1999", "y")); err == nil || !strings.Contains(err.Error(), "loaded 2") {
		t.Fatalf("a chunk with a duplicate key: %d rows, %v", n, err)
	}
	var count int
	must(db.QueryRowContext(ctx, "SELECT COUNT(*) FROM app.t").Scan(&count))
	if count != 5 {
		t.Fatalf("after the failed chunk the table has %d rows, want 5", count)
	}

	must(srv.Exec(ctx, "SET GLOBAL local_infile = 0"))
	defer srv.Exec(ctx, "SET GLOBAL local_infile = 1")
	if localInfile(ctx, conn) {
		t.Fatal("the target's local_infile is off, but the loader sees it on")
	}
	if _, err := load(cells("7", "x", "1999", "x")); !errors.Is(err, errLoadDataRefused) {
		t.Fatalf("a refused LOAD DATA: %v", err)
	}
}
