package fold_test

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/dumpconv"
	"github.com/dbtrail/dbtrail/internal/dumpfile"
	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/mydumper"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/verify"
	"github.com/dbtrail/dbtrail/testsuite"
)

// reshapeTable is the table every case of TestReshapeAgainstMariaDB alters:
// one column of each type the rules name, rows with edge values and NULLs.
var reshapeTable = []string{
	"DROP TABLE IF EXISTS t",
	`CREATE TABLE t (
	  id INT NOT NULL PRIMARY KEY,
	  i INT, u INT UNSIGNED, d DECIMAL(10,2), f FLOAT, db DOUBLE,
	  dt DATETIME(3), da DATE, tm TIME, ts TIMESTAMP(2) NULL,
	  e ENUM('x','y','z'), s SET('p','q','r'), bt BIT(5), c CHAR(5), v VARCHAR(10),
	  bn BINARY(4), vb VARBINARY(8), tx TEXT, y YEAR, nn INT NOT NULL DEFAULT 0,
	  g BIGINT AS (i + 1) VIRTUAL
	) DEFAULT CHARSET=utf8mb4`,
	`INSERT INTO t (id,i,u,d,f,db,dt,da,tm,ts,e,s,bt,c,v,bn,vb,tx,y,nn) VALUES
	  (1, -5, 7, -12.34, 1.1, 2.5, '2026-01-02 03:04:05.678', '2026-02-28', '-12:34:56', '2026-03-04 05:06:07.89',
	   'y', 'p,r', b'10101', 'ab', 'sp  ', 'ab', x'00ff', 'text é', 2024, 3),
	  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0),
	  (3, 2147483647, 4294967295, 99999999.99, -3.4e38, 1e-300, '0000-00-00 00:00:00', '0000-00-00', '838:59:59',
	   '2000-01-01 00:00:00', 'x', '', b'0', '', '', '', '', '', 1901, -1),
	  (4, 0, 0, 0, 0, 0, '1000-01-01 00:00:00.001', '9999-12-31', '00:00:00', NULL, 'z', 'q', b'11111', 'abcde', 'ünïcødé', x'01020304', x'', 'x', 2155, 7)`,
}

// reshapeCases are the schema changes the fold proves, each applied to a
// fresh reshapeTable.
var reshapeCases = []struct {
	name, alter string
	table       []string // nil: reshapeTable
}{
	{"defaults by type", `ALTER TABLE t ADD COLUMN a1 DECIMAL(10,2) DEFAULT 1.5, ADD COLUMN a2 DATETIME(3) DEFAULT '2026-01-02 03:04:05.5',
		ADD COLUMN a3 DATE DEFAULT '2024-02-29', ADD COLUMN a4 TIME(2) DEFAULT '-1:02:03', ADD COLUMN a5 ENUM('a','b') DEFAULT 'b',
		ADD COLUMN a6 SET('a','b','c') DEFAULT 'c,a', ADD COLUMN a7 BIT(5) DEFAULT b'101', ADD COLUMN a8 CHAR(5) DEFAULT 'ab  ',
		ADD COLUMN a9 VARCHAR(5) DEFAULT 'ab  ', ADD COLUMN a10 DECIMAL(6,0) DEFAULT '-42', ADD COLUMN a11 DATETIME DEFAULT '2026-07-08'`, nil},
	{"empty vs null and more types", `ALTER TABLE t ADD COLUMN b1 VARCHAR(5) DEFAULT '', ADD COLUMN b2 VARCHAR(5) DEFAULT NULL,
		ADD COLUMN b3 VARCHAR(5), ADD COLUMN b4 BINARY(3) DEFAULT 'a', ADD COLUMN b5 VARBINARY(3) DEFAULT x'ff00',
		ADD COLUMN b6 FLOAT DEFAULT 0.1, ADD COLUMN b7 DOUBLE DEFAULT -2.5e-3, ADD COLUMN b8 YEAR DEFAULT 2024,
		ADD COLUMN b9 TEXT DEFAULT 'note', ADD COLUMN b10 BIT(12) DEFAULT 5, ADD COLUMN b11 TIMESTAMP NULL DEFAULT NULL,
		ADD COLUMN b12 INT DEFAULT TRUE, ADD COLUMN b13 BIGINT UNSIGNED DEFAULT 18446744073709551615,
		ADD COLUMN b16 CHAR(3) DEFAULT '',
		ADD COLUMN b17 TIMESTAMP(1) NOT NULL DEFAULT '0000-00-00 00:00:00', ADD COLUMN b18 TINYINT DEFAULT -128`, nil},
	{"not null without default", `ALTER TABLE t ADD COLUMN n1 INT NOT NULL, ADD n2 DECIMAL(6,3) NOT NULL, ADD n3 DATE NOT NULL,
		ADD n4 DATETIME(2) NOT NULL, ADD n5 TIME(1) NOT NULL, ADD n6 YEAR NOT NULL, ADD n7 ENUM('k','l') NOT NULL,
		ADD n8 SET('k','l') NOT NULL, ADD n9 BINARY(2) NOT NULL, ADD n10 BIT(10) NOT NULL, ADD n11 CHAR(3) NOT NULL,
		ADD n12 VARCHAR(3) NOT NULL, ADD n13 BLOB NOT NULL, ADD n14 FLOAT NOT NULL, ADD n15 DOUBLE NOT NULL,
		ADD n16 VARBINARY(3) NOT NULL, ADD n17 TEXT NOT NULL, ADD n18 BIGINT UNSIGNED NOT NULL, ADD n19 TINYINT NOT NULL,
		ADD n20 MEDIUMTEXT NOT NULL, ADD n21 LONGBLOB NOT NULL, ADD n22 DECIMAL(4,0) UNSIGNED NOT NULL`, nil},
	{"edge literals", `ALTER TABLE t ADD COLUMN t1 TIME DEFAULT '100:00:00', ADD t2 DECIMAL(5,2) DEFAULT -0.5,
		ADD t3 DOUBLE DEFAULT 1e300, ADD t4 FLOAT DEFAULT 3.4e38, ADD t5 DATETIME(6) DEFAULT '2026-01-02 03:04:05.123456',
		ADD t6 BIT(64) DEFAULT x'ffffffffffffffff', ADD t7 SET('a','b') DEFAULT 'b,a,b', ADD t8 DATETIME(2) DEFAULT '2026-01-02 03:04:05.100',
		ADD t9 BINARY(2) DEFAULT x'', ADD t10 INT UNSIGNED DEFAULT '4294967295', ADD t11 FLOAT DEFAULT 16777217`, nil},
	{"first and after", "ALTER TABLE t ADD COLUMN f1 INT DEFAULT 7 FIRST, ADD COLUMN f2 VARCHAR(3) DEFAULT 'z' AFTER d, ADD COLUMN f3 INT AFTER f1", nil},
	{"rename change drop move", "ALTER TABLE t RENAME COLUMN i TO i2, CHANGE v v2 VARCHAR(10), DROP COLUMN tx, MODIFY c CHAR(5) AFTER vb, MODIFY id INT NOT NULL FIRST", nil},
	{"widen", `ALTER TABLE t MODIFY i BIGINT, MODIFY u BIGINT UNSIGNED, MODIFY d DECIMAL(14,4), MODIFY v VARCHAR(40),
		MODIFY c CHAR(8), MODIFY dt DATETIME(6), MODIFY tm TIME(4), MODIFY ts TIMESTAMP(5) NULL, MODIFY e ENUM('x','y','z','w'),
		MODIFY s SET('p','q','r','t'), MODIFY bt BIT(12), MODIFY bn BINARY(6), MODIFY vb VARBINARY(20), MODIFY tx MEDIUMTEXT,
		MODIFY nn INT NULL`, nil},
	{"widen across types", "ALTER TABLE t MODIFY u BIGINT, MODIFY v TEXT, MODIFY vb BLOB, MODIFY tx LONGTEXT, MODIFY y YEAR NULL", nil},
	{"metadata only", "ALTER TABLE t ADD INDEX iv (v), COMMENT 'x', ALTER COLUMN i SET DEFAULT 9, ENGINE=InnoDB, ALGORITHM=COPY", nil},
	{"new primary key", "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (nn, id)", nil},
	{"drop and add back", "ALTER TABLE t DROP COLUMN e, ADD COLUMN e ENUM('x','y') NOT NULL DEFAULT 'y' AFTER db", nil},
	{"if exists and literal forms", `ALTER TABLE t ADD COLUMN IF NOT EXISTS nn INT, ADD COLUMN IF NOT EXISTS z INT DEFAULT (5),
		DROP COLUMN IF EXISTS nope, ADD INDEX IF NOT EXISTS iz (z), ADD COLUMN z2 VARCHAR(4) DEFAULT _utf8mb4'q',
		ADD COLUMN z3 SMALLINT DEFAULT -7, ADD COLUMN z4 DECIMAL(4,1) DEFAULT .5, CHANGE COLUMN v V VARCHAR(10)`, nil},
	{"create index", "CREATE UNIQUE INDEX unn ON t (nn)", nil},
	{"drop index", "DROP INDEX `PRIMARY` ON t", nil},
	{"keyless table", "ALTER TABLE t ADD COLUMN c INT DEFAULT 4 FIRST, DROP COLUMN b", keyless},
	{"keyless gets a key", "ALTER TABLE t ADD PRIMARY KEY (k)", []string{"DROP TABLE IF EXISTS t",
		"CREATE TABLE t (k INT NOT NULL, b VARCHAR(3))", "INSERT INTO t VALUES (1, 'x'), (2, NULL)"}},
}

// sameRowsCases are the reshapeCases that change no row nor column type.
var sameRowsCases = []string{"metadata only", "new primary key", "create index", "drop index", "keyless gets a key"}

// keyless is a table without a key holding two identical rows.
var keyless = []string{
	"DROP TABLE IF EXISTS t",
	"CREATE TABLE t (a INT, b VARCHAR(3))",
	"INSERT INTO t VALUES (1, 'x'), (1, 'x'), (NULL, NULL), (2, '')",
}

// reshapeRedumps are schema changes the fold must not prove.
var reshapeRedumps = []struct{ alter, reason string }{
	{"ALTER TABLE t DROP COLUMN id", "part of the table's key"},
	{"ALTER TABLE t MODIFY c VARCHAR(5)", "type char(5)"},
	{"ALTER TABLE t MODIFY i DECIMAL(12,0)", "type int → decimal(12,0)"},
	{"ALTER TABLE t MODIFY v VARCHAR(10) CHARACTER SET latin1", "character set utf8mb4 → latin1"},
	{"ALTER TABLE t ADD COLUMN z DATETIME DEFAULT CURRENT_TIMESTAMP", "not a constant"},
	{"ALTER TABLE t CONVERT TO CHARACTER SET latin1", "CONVERT TO CHARACTER SET"},
	{"ALTER TABLE t ADD COLUMN z INT AS (id * 2) STORED", "STORED generated"},
}

// TestReshapeAgainstMariaDB proves PlanReshape and Engine.Reshape against
// the server: for every case, a table file of the rows before the ALTER,
// reshaped, holds exactly the rows the server has after it (compared row by
// row in canonical form, and by the verify fingerprint of the live table)
// and exactly what a full backup (mydumper, dumpconv) writes after it.
// Skipped only with -short (make unit); a server that cannot start fails it.
func TestReshapeAgainstMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a MariaDB server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	src := testsuite.StartSource(t)
	if err := src.Exec(ctx, "CREATE DATABASE r"); err != nil {
		t.Fatal(err)
	}
	db, err := src.DB(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	e, err := fold.Open(ctx, fold.Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, c := range reshapeCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			table := c.table
			if table == nil {
				table = reshapeTable
			}
			old, before := reshapeBefore(ctx, t, db, dir, table)
			if _, err := db.ExecContext(ctx, c.alter); err != nil {
				t.Fatalf("%s: %v", c.alter, err)
			}
			after := storedDef(ctx, t, db)
			r, err := schema.PlanReshape(old, after, c.alter)
			if err != nil {
				t.Fatalf("PlanReshape: %v", err)
			}
			checkModelPlan(t, old, c.alter, r)
			if want := slices.Contains(sameRowsCases, c.name); r.SameRows() != want {
				t.Errorf("SameRows %v, want %v", r.SameRows(), want)
			}
			out, err := os.Create(filepath.Join(dir, "after.parquet"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Reshape(ctx, before, r, after, snapshot.FooterMeta{SnapshotID: "s2", Source: "src"}, out, nil)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatalf("Reshape: %v", err)
			}
			checkValues(t, out.Name(), r)
			got := fileRows(t, out.Name(), after, true)
			want := liveRows(ctx, t, db, after)
			if !slices.Equal(got, want) {
				t.Errorf("reshaped rows differ from the server's after %s:\n got %s\nwant %s", c.alter, strings.Join(got, "\n    "), strings.Join(want, "\n    "))
			}
			fp, _, err := verify.LiveFingerprint(ctx, db, after)
			if err != nil {
				t.Fatal(err)
			}
			if res.Fingerprint != fp {
				t.Errorf("reshaped fingerprint %s, live %s", res.Fingerprint, fp)
			}
			// A dump holds FLOATs with 6 digits; the full backup makes them
			// exact afterwards (internal/exactfloat), the live rows above
			// check them exactly.
			dumped, dumpFP := dumpTable(ctx, t, src, dir, after)
			if noFloat := fileRows(t, out.Name(), after, false); !slices.Equal(noFloat, dumped) {
				t.Errorf("reshaped rows differ from a full backup's (FLOAT aside):\n got %s\nwant %s",
					strings.Join(noFloat, "\n    "), strings.Join(dumped, "\n    "))
			}
			if !slices.ContainsFunc(after.Columns, func(c schema.Column) bool { return c.Type == "float" }) && res.Fingerprint != dumpFP {
				t.Errorf("reshaped fingerprint %s, a full backup's %s", res.Fingerprint, dumpFP)
			}
		})
	}
	for _, c := range reshapeRedumps {
		t.Run("redump "+c.alter, func(t *testing.T) {
			old, _ := reshapeBefore(ctx, t, db, t.TempDir(), reshapeTable)
			if _, err := db.ExecContext(ctx, c.alter); err != nil {
				t.Fatalf("%s: %v", c.alter, err)
			}
			_, err := schema.PlanReshape(old, storedDef(ctx, t, db), c.alter)
			var re *schema.RedumpError
			if !errors.As(err, &re) || !strings.Contains(re.Reason, c.reason) {
				t.Errorf("PlanReshape: %v; want a redump saying %q", err, c.reason)
			}
		})
	}
}

// reshapeBefore creates the table afresh and writes its rows as a table
// file: its stored definition and the file's path.
func reshapeBefore(ctx context.Context, t *testing.T, db *sql.DB, dir string, table []string) (*schema.Table, string) {
	t.Helper()
	for _, s := range table {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%.60s...: %v", s, err)
		}
	}
	def := storedDef(ctx, t, db)
	path := filepath.Join(dir, "before.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw, err := snapshot.NewTableWriter(f, def, snapshot.FooterMeta{SnapshotID: "s1", Source: "src"}, snapshot.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	selectLive(ctx, t, db, def, func(row []rowimage.Cell) {
		if err := tw.AppendSQL(row); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return def, path
}

// dumpTable is what a full backup writes of r.t: a mydumper dump of the
// database converted by dumpconv into a table file. It returns the file's
// rows in canonical form (FLOAT columns left out) and its fingerprint,
// after checking that the dump's columns are want's.
func dumpTable(ctx context.Context, t *testing.T, src *testsuite.Server, dir string, want *schema.Table) ([]string, snapshot.Fingerprint) {
	t.Helper()
	dumpDir := filepath.Join(dir, "dump")
	if err := os.Mkdir(dumpDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := (mydumper.Run{DSN: src.DSN("r"), Dir: dumpDir}).Do(ctx); err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS(dumpDir)
	tables, _, err := dumpfile.ListTables(fsys)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(tables, func(tf dumpfile.TableFiles) bool { return tf.Schema == "r" && tf.Table == "t" })
	if i < 0 {
		t.Fatalf("the dump has no r.t: %+v", tables)
	}
	def, _, err := dumpconv.Definition(fsys, "r", "t", tables[i].SchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(def.ColumnNames(), want.ColumnNames()) {
		t.Fatalf("the dump's columns %v, the server's %v", def.ColumnNames(), want.ColumnNames())
	}
	path := filepath.Join(dir, "dumped.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The CREATE TABLE text stays out of the footer: a binary default
	// (x'ff00') makes it invalid UTF-8, which Parquet metadata refuses.
	tw, err := snapshot.NewTableWriter(f, def, snapshot.FooterMeta{}, snapshot.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := dumpconv.Convert(ctx, fsys, tables[i].DataFiles, def, tw, nil); err != nil {
		t.Fatal(err)
	}
	res, err := tw.Close()
	if err != nil {
		t.Fatal(err)
	}
	return fileRows(t, path, want, false), res.Fingerprint
}

// storedDef reads table r.t from information_schema: its stored definition.
func storedDef(ctx context.Context, t *testing.T, db *sql.DB) *schema.Table {
	t.Helper()
	cat, err := schema.LoadFromServer(ctx, db, []string{"r"})
	if err != nil {
		t.Fatal(err)
	}
	tb, ok := cat.Get("r", "t")
	if !ok {
		t.Fatal("no table r.t")
	}
	s, err := tb.Stored()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkModelPlan plans the same reshape from the definitions ApplyDDL
// derives (what the refresh has), which must agree with the server's.
func checkModelPlan(t *testing.T, old *schema.Table, alter string, want schema.Reshape) {
	t.Helper()
	cat := schema.NewCatalog()
	cat.SetSchemaCharset("r", "utf8mb4")
	full := old.Clone()
	cat.Put(full)
	if _, err := schema.ApplyDDL(cat, "r", alter); err != nil {
		t.Fatalf("ApplyDDL: %v", err)
	}
	nt, _ := cat.Get("r", "t")
	ns, err := nt.Stored()
	if err != nil {
		t.Fatal(err)
	}
	got, err := schema.PlanReshape(old, ns, alter)
	if err != nil {
		t.Fatalf("PlanReshape from ApplyDDL's definition: %v", err)
	}
	if !slices.EqualFunc(got.Columns, want.Columns, func(a, b schema.ColumnSource) bool {
		return a.Name == b.Name && a.From == b.From && (a.Value == nil) == (b.Value == nil) && (a.Value == nil || *a.Value == *b.Value)
	}) {
		t.Errorf("PlanReshape from ApplyDDL's definition %+v, from the server's %+v", got.Columns, want.Columns)
	}
}

// selectLive calls fn with every row of t on the server in the SQL text
// form, read as verify reads a live table (NAMES utf8mb4, UTC, FLOAT as
// DOUBLE).
func selectLive(ctx context.Context, t *testing.T, db *sql.DB, def *schema.Table, fn func([]rowimage.Cell)) {
	t.Helper()
	conn, _, release, err := verify.ConsistentSnapshot(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	cols := make([]string, len(def.Columns))
	for i, c := range def.Columns {
		cols[i] = "`" + c.Name + "`"
		if c.Type == "float" {
			cols[i] = "CAST(" + cols[i] + " AS DOUBLE)"
		}
	}
	rows, err := conn.QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM r.t")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	raw := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(raw))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	cells := make([]rowimage.Cell, len(raw))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range raw {
			cells[i] = rowimage.RawCell(v)
		}
		fn(cells)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// liveRows returns the server's rows of t in canonical form.
func liveRows(ctx context.Context, t *testing.T, db *sql.DB, def *schema.Table) []string {
	t.Helper()
	var out []string
	selectLive(ctx, t, db, def, func(row []rowimage.Cell) { out = append(out, canonicalRow(t, def, row, true)) })
	slices.Sort(out)
	return out
}

// fileRows returns the rows of a table file in canonical form.
func fileRows(t *testing.T, path string, def *schema.Table, floats bool) []string {
	t.Helper()
	r, err := snapshot.OpenTableFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, canonicalRow(t, def, row, floats))
	}
	slices.Sort(out)
	return out
}

// checkValues checks that every added column of r reads back from the
// reshaped file as exactly its Value: the text form a table file stores.
func checkValues(t *testing.T, path string, r schema.Reshape) {
	t.Helper()
	tr, err := snapshot.OpenTableFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	row, err := tr.Next()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range r.Columns {
		switch {
		case c.From != "":
		case c.Value == nil && !row[i].Null:
			t.Errorf("column %s reads back as %q, want NULL", c.Name, row[i].Text)
		case c.Value != nil && (row[i].Null || string(row[i].Text) != *c.Value):
			t.Errorf("column %s reads back as %q (null %v), its Value is %q", c.Name, row[i].Text, row[i].Null, *c.Value)
		}
	}
}

// canonicalRow renders a row as its columns' canonical values, FLOAT
// columns only with floats.
func canonicalRow(t *testing.T, def *schema.Table, row []rowimage.Cell, floats bool) string {
	t.Helper()
	var b []byte
	for i := range def.Columns {
		if !floats && def.Columns[i].Type == "float" {
			continue
		}
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, def.Columns[i].Name+"="...)
		var err error
		if b, err = rowimage.AppendSQLValue(b, &def.Columns[i], row[i]); err != nil {
			t.Fatal(err)
		}
	}
	return string(b)
}
