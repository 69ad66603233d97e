package schema

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// shape renders a table as "col:type,col:type|kind:key,key" for compact
// expectations; nullable columns get a '?'.
func shape(tb *Table) string {
	var cols []string
	for _, c := range tb.Columns {
		s := c.Name + ":" + c.Type
		if c.Nullable {
			s += "?"
		}
		cols = append(cols, s)
	}
	return strings.Join(cols, ",") + "|" + string(tb.KeyKind) + ":" + strings.Join(tb.Key, ",")
}

func TestApplyDDLStatements(t *testing.T) {
	base := []string{
		"CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10), b INT)",
		"CREATE TABLE u (x INT NOT NULL, y INT, UNIQUE KEY uy (y), UNIQUE KEY ux (x))",
	}
	cases := []struct {
		name  string
		stmts []string
		kind  ChangeKind
		table string // table to check afterwards ("" for none)
		want  string // its shape, or "-" when it must be gone
	}{
		{"pk inline", nil, ChangeCreate, "t", "id:int,a:varchar?,b:int?|primary:id"},
		{"pk constraint", []string{"CREATE TABLE p (a INT, b INT, CONSTRAINT pk PRIMARY KEY (b, a))"}, ChangeCreate, "p", "a:int,b:int|primary:b,a"},
		{"unique fallback skips nullable", nil, ChangeCreate, "u", "x:int,y:int?|unique:x"},
		{"no usable key", []string{"CREATE TABLE r (a INT, b TEXT, UNIQUE (a), UNIQUE KEY (b(10)))"}, ChangeCreate, "r", "a:int?,b:text?|row:a,b"},
		{"prefix unique not used", []string{"CREATE TABLE r (a VARCHAR(20) NOT NULL, UNIQUE KEY (a(5)))"}, ChangeCreate, "r", "a:varchar|row:a"},
		{"serial", []string{"CREATE TABLE s (id SERIAL, v INT)"}, ChangeCreate, "s", "id:bigint,v:int?|unique:id"},
		{"if not exists existing", []string{"CREATE TABLE IF NOT EXISTS t (z INT)"}, ChangeNone, "t", "id:int,a:varchar?,b:int?|primary:id"},
		{"if not exists new", []string{"CREATE TABLE IF NOT EXISTS n (z INT)"}, ChangeCreate, "n", "z:int?|row:z"},
		{"like", []string{"CREATE TABLE t2 LIKE t"}, ChangeCreate, "t2", "id:int,a:varchar?,b:int?|primary:id"},
		{"like in parens", []string{"CREATE TABLE t2 (LIKE t)"}, ChangeCreate, "t2", "id:int,a:varchar?,b:int?|primary:id"},
		{"or replace", []string{"CREATE OR REPLACE TABLE t (z INT)"}, ChangeCreate, "t", "z:int?|row:z"},
		{"temporary ignored", []string{"CREATE TEMPORARY TABLE t (z INT)"}, ChangeNone, "t", "id:int,a:varchar?,b:int?|primary:id"},
		{"drop temporary ignored", []string{"DROP TEMPORARY TABLE IF EXISTS t"}, ChangeNone, "t", "id:int,a:varchar?,b:int?|primary:id"},
		{"add first and after", []string{"ALTER TABLE t ADD COLUMN c INT FIRST, ADD d DATE AFTER id"}, ChangeAlter, "t", "c:int?,id:int,d:date?,a:varchar?,b:int?|primary:id"},
		{"add several", []string{"ALTER TABLE t ADD (c INT, d INT NOT NULL)"}, ChangeAlter, "t", "id:int,a:varchar?,b:int?,c:int?,d:int|primary:id"},
		{"drop column", []string{"ALTER TABLE t DROP COLUMN a"}, ChangeAlter, "t", "id:int,b:int?|primary:id"},
		{"drop then add", []string{"ALTER TABLE t DROP a, ADD a BIGINT"}, ChangeAlter, "t", "id:int,b:int?,a:bigint?|primary:id"},
		{"modify", []string{"ALTER TABLE t MODIFY a TEXT NOT NULL FIRST"}, ChangeAlter, "t", "a:text,id:int,b:int?|primary:id"},
		{"change renames and retypes", []string{"ALTER TABLE t CHANGE id ident BIGINT UNSIGNED"}, ChangeAlter, "t", "ident:bigint,a:varchar?,b:int?|primary:ident"},
		{"change column after", []string{"ALTER TABLE t CHANGE COLUMN b bb INT AFTER id"}, ChangeAlter, "t", "id:int,bb:int?,a:varchar?|primary:id"},
		{"rename column", []string{"ALTER TABLE u RENAME COLUMN x TO xx"}, ChangeAlter, "u", "xx:int,y:int?|unique:xx"},
		{"set default changes nothing", []string{"ALTER TABLE t ALTER COLUMN a SET DEFAULT 'x'", "ALTER TABLE t ALTER b DROP DEFAULT"}, ChangeNone, "t", "id:int,a:varchar?,b:int?|primary:id"},
		{"engine changes nothing", []string{"ALTER TABLE t ENGINE=InnoDB, ALGORITHM=INPLACE, LOCK=NONE"}, ChangeNone, "t", "id:int,a:varchar?,b:int?|primary:id"},
		{"drop primary key", []string{"ALTER TABLE t DROP PRIMARY KEY"}, ChangeAlter, "t", "id:int,a:varchar?,b:int?|row:id,a,b"},
		{"add primary key", []string{"ALTER TABLE u ADD PRIMARY KEY (y)"}, ChangeAlter, "u", "x:int,y:int|primary:y"},
		{"add constraint primary", []string{"ALTER TABLE u ADD CONSTRAINT pk PRIMARY KEY (y, x)"}, ChangeAlter, "u", "x:int,y:int|primary:y,x"},
		{"drop index falls back", []string{"ALTER TABLE u DROP INDEX ux"}, ChangeAlter, "u", "x:int,y:int?|row:x,y"},
		{"drop key then modify", []string{"ALTER TABLE u DROP KEY ux, MODIFY y INT NOT NULL"}, ChangeAlter, "u", "x:int,y:int|unique:y"},
		{"add unique", []string{"ALTER TABLE t DROP PRIMARY KEY, ADD UNIQUE KEY (b), MODIFY b INT NOT NULL"}, ChangeAlter, "t", "id:int,a:varchar?,b:int|unique:b"},
		{"drop constraint", []string{"ALTER TABLE u DROP CONSTRAINT ux"}, ChangeAlter, "u", "x:int,y:int?|row:x,y"},
		{"rename to", []string{"ALTER TABLE t RENAME TO t9"}, ChangeRename, "t9", "id:int,a:varchar?,b:int?|primary:id"},
		{"rename as and alter", []string{"ALTER TABLE t RENAME AS t9, ADD c INT"}, ChangeAlter, "t9", "id:int,a:varchar?,b:int?,c:int?|primary:id"},
		{"renamed away", []string{"ALTER TABLE t RENAME TO other.t"}, ChangeRename, "t", "-"},
		{"drop column if exists", []string{"ALTER TABLE t DROP COLUMN IF EXISTS nope, ADD COLUMN IF NOT EXISTS a INT, ADD COLUMN IF NOT EXISTS c INT"}, ChangeAlter, "t", "id:int,a:varchar?,b:int?,c:int?|primary:id"},
		{"modify if exists", []string{"ALTER TABLE t MODIFY COLUMN IF EXISTS nope INT, CHANGE COLUMN IF EXISTS nope2 x INT"}, ChangeNone, "t", "id:int,a:varchar?,b:int?|primary:id"},
		{"unique if not exists", []string{"ALTER TABLE u ADD UNIQUE KEY IF NOT EXISTS ux (y), ADD INDEX IF NOT EXISTS ux (y)"}, ChangeNone, "u", "x:int,y:int?|unique:x"},
		{"alter online ignore wait", []string{"ALTER ONLINE IGNORE TABLE t WAIT 10 ADD c INT", "ALTER TABLE t NOWAIT DROP c"}, ChangeAlter, "t", "id:int,a:varchar?,b:int?|primary:id"},
		{"mariadb table options", []string{"ALTER TABLE t ADD c INT, PAGE_COMPRESSED=1, `encrypted`=yes"}, ChangeAlter, "t", "id:int,a:varchar?,b:int?,c:int?|primary:id"},
		{"ignored index", []string{"ALTER TABLE u ALTER INDEX ux IGNORED", "ALTER TABLE u ALTER INDEX ux NOT IGNORED"}, ChangeNone, "u", "x:int,y:int?|unique:x"},
		{"rename table swap", []string{"RENAME TABLE t TO tmp, u TO t, tmp TO u"}, ChangeRename, "t", "x:int,y:int?|unique:x"},
		{"rename table cross schema", []string{"RENAME TABLE db.t TO other.t, u TO t"}, ChangeRename, "t", "x:int,y:int?|unique:x"},
		{"rename tables if exists", []string{"RENAME TABLE IF EXISTS t TO t3"}, ChangeRename, "t3", "id:int,a:varchar?,b:int?|primary:id"},
		{"drop several", []string{"DROP TABLE IF EXISTS t, u, nope /* generated by server */"}, ChangeDrop, "u", "-"},
		{"truncate", []string{"TRUNCATE t"}, ChangeTruncate, "t", "id:int,a:varchar?,b:int?|primary:id"},
		{"truncate table", []string{"TRUNCATE TABLE db.t"}, ChangeTruncate, "t", "id:int,a:varchar?,b:int?|primary:id"},
		{"drop partition", []string{"ALTER TABLE t DROP PARTITION p0"}, ChangeTruncate, "t", "id:int,a:varchar?,b:int?|primary:id"},
		{"truncate partition", []string{"ALTER TABLE t TRUNCATE PARTITION p0, p1"}, ChangeTruncate, "t", "id:int,a:varchar?,b:int?|primary:id"},
		{"exchange partition", []string{"ALTER TABLE t EXCHANGE PARTITION p0 WITH TABLE u"}, ChangeTruncate, "u", "x:int,y:int?|unique:x"},
		{"drop database", []string{"DROP DATABASE db"}, ChangeDropSchema, "t", "-"},
		{"drop schema if exists", []string{"DROP SCHEMA IF EXISTS `db`"}, ChangeDropSchema, "u", "-"},
		{"create unique index", []string{"ALTER TABLE t DROP PRIMARY KEY", "CREATE UNIQUE INDEX ia ON t (id)"}, ChangeAlter, "t", "id:int,a:varchar?,b:int?|unique:id"},
		{"create index keeps key", []string{"CREATE INDEX ib ON t (b)"}, ChangeAlter, "t", "id:int,a:varchar?,b:int?|primary:id"},
		{"drop index", []string{"DROP INDEX ux ON u"}, ChangeAlter, "u", "x:int,y:int?|row:x,y"},
		{"create or replace index", []string{"CREATE OR REPLACE UNIQUE INDEX uy ON u (x)", "ALTER TABLE u DROP INDEX ux"}, ChangeAlter, "u", "x:int,y:int?|unique:x"},
		{"spatial index", []string{"CREATE TABLE g (p POINT NOT NULL, SPATIAL INDEX (p))", "ALTER TABLE g ADD SPATIAL KEY sp (p)"}, ChangeAlter, "g", "p:point|row:p"},
		{"executable comments", []string{"/*!40101 SET NAMES utf8 */", "CREATE TABLE c (a INT /*!50100 NOT NULL */, b INT /*M!100301 INVISIBLE */) /*!50100 ENGINE=InnoDB */"}, ChangeCreate, "c", "a:int,b:int?|row:a,b"},
		{"quoted names", []string{"CREATE TABLE `we``ird` (`uuid` INT, `point` UUID, c VARCHAR(9) DEFAULT 'UUID')"}, ChangeCreate, "we`ird", "uuid:int?,point:uuid?,c:varchar?|row:uuid,point,c"},
		{"uuid default is not a type", []string{"CREATE TABLE q (u UUID DEFAULT UUID(), p POINT DEFAULT POINT(1,1), uuid INT)"}, ChangeCreate, "q", "u:uuid?,p:point?,uuid:int?|row:u,p,uuid"},
		{"modify to uuid", []string{"ALTER TABLE t MODIFY a UUID NOT NULL, CHANGE b bb INET4 AFTER id"}, ChangeAlter, "t", "id:int,bb:inet4?,a:uuid|primary:id"},
		{"add uuid first", []string{"ALTER TABLE t ADD COLUMN IF NOT EXISTS g UUID FIRST"}, ChangeAlter, "t", "g:uuid?,id:int,a:varchar?,b:int?|primary:id"},
		{"create table options", []string{"CREATE TABLE o (a INT) ENGINE=InnoDB PAGE_COMPRESSED=1 `encrypted`=yes DEFAULT CHARSET=latin1 PARTITION BY HASH(a) PARTITIONS 2"}, ChangeCreate, "o", "a:int?|row:a"},
		{"generated columns", []string{"CREATE TABLE gen (a INT, b INT AS (a+1) VIRTUAL, c INT AS (a) PERSISTENT, d INT GENERATED ALWAYS AS (a) STORED)"}, ChangeCreate, "gen", "a:int?,b:int?,c:int?,d:int?|row:a,b,c,d"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cat := NewCatalog()
			mustApply(t, cat, base...)
			var ch Change
			if len(tc.stmts) == 0 {
				ch = Change{Kind: ChangeCreate}
			} else {
				ch = mustApply(t, cat, tc.stmts...)
			}
			if ch.Kind != tc.kind {
				t.Errorf("kind %q, want %q (change %s)", ch.Kind, tc.kind, jsonOf(ch))
			}
			tb, ok := cat.Get("db", tc.table)
			switch {
			case tc.want == "-" && ok:
				t.Errorf("table %s still in catalog: %s", tc.table, shape(tb))
			case tc.want != "-" && !ok:
				t.Errorf("table %s missing", tc.table)
			case ok && shape(tb) != tc.want:
				t.Errorf("table %s:\n got %s\nwant %s", tc.table, shape(tb), tc.want)
			}
		})
	}
}

func TestApplyDDLChanges(t *testing.T) {
	cat := NewCatalog()
	mustApply(t, cat, "CREATE TABLE a (x INT PRIMARY KEY)", "CREATE TABLE b (y INT)")
	old := mustGet(t, cat, "a")

	ch := mustApply(t, cat, "RENAME TABLE a TO tmp, b TO a, tmp TO b")
	if len(ch.Tables) != 2 {
		t.Fatalf("swap: %d table changes, want 2: %s", len(ch.Tables), jsonOf(ch))
	}
	for _, tc := range ch.Tables {
		if tc.OldSchema != "db" || tc.OldName == tc.Name || tc.Old.Name != tc.OldName || tc.New.Name != tc.Name {
			t.Errorf("swap change %s", jsonOf(tc))
		}
	}
	if got := mustGet(t, cat, "b"); !SameShape(got, &Table{Columns: old.Columns, Key: old.Key, KeyKind: old.KeyKind}) || got.Name != "b" {
		t.Errorf("b after swap: %s", jsonOf(got))
	}
	if old.Name != "a" {
		t.Errorf("the published definition was mutated: %s", jsonOf(old))
	}

	ch = mustApply(t, cat, "CREATE OR REPLACE TABLE a (z INT)")
	if len(ch.Tables) != 1 || ch.Tables[0].Old == nil || ch.Tables[0].New == nil {
		t.Errorf("create or replace: %s", jsonOf(ch))
	}
	ch = mustApply(t, cat, "DROP TABLE IF EXISTS a, nope")
	if len(ch.Tables) != 1 || ch.Tables[0].New != nil || !slices.Equal(ch.Unknown, []string{"db.nope"}) {
		t.Errorf("drop: %s", jsonOf(ch))
	}
	ch = mustApply(t, cat, "ALTER TABLE nope ADD c INT")
	if ch.Kind != ChangeAlter || len(ch.Tables) != 0 || !slices.Equal(ch.Unknown, []string{"db.nope"}) {
		t.Errorf("alter unknown: %s", jsonOf(ch))
	}
	ch = mustApply(t, cat, "CREATE TABLE c LIKE other.src")
	if _, ok := cat.Get("db", "c"); ok || !slices.Equal(ch.Unknown, []string{"other.src"}) {
		t.Errorf("like unknown: %s", jsonOf(ch))
	}
	ch = mustApply(t, cat, "CREATE DATABASE IF NOT EXISTS s9 DEFAULT CHARACTER SET = latin2 COMMENT 'x'")
	if ch.Kind != ChangeNone || ch.Schema != "s9" || ch.SchemaCharset != "latin2" || cat.SchemaCharset("s9") != "latin2" {
		t.Errorf("create database: %s", jsonOf(ch))
	}
	mustApply(t, cat, "ALTER DATABASE s9 COLLATE utf8mb4_uca1400_ai_ci")
	if cat.SchemaCharset("s9") != "utf8mb4" {
		t.Errorf("alter database: charset %q", cat.SchemaCharset("s9"))
	}
	mustApply(t, cat, "CREATE TABLE s9.x (a INT)", "USE s9", "ALTER SCHEMA CHARACTER SET latin1")
	if cat.SchemaCharset("s9") != "utf8mb4" || cat.SchemaCharset("db") != "latin1" {
		t.Errorf("alter default database: %q %q", cat.SchemaCharset("s9"), cat.SchemaCharset("db"))
	}
	ch = mustApply(t, cat, "CREATE OR REPLACE DATABASE s9 CHARSET ascii")
	if _, ok := cat.Get("s9", "x"); ok || ch.Kind != ChangeDropSchema || len(ch.Tables) != 1 || cat.SchemaCharset("s9") != "ascii" {
		t.Errorf("create or replace database: %s", jsonOf(ch))
	}
}

func TestApplyDDLNotTableDDL(t *testing.T) {
	for _, s := range []string{
		"BEGIN", "COMMIT", "XA START 'x'", "SAVEPOINT s",
		"CREATE USER 'a'@'%' IDENTIFIED BY 'x'", "GRANT ALL ON *.* TO 'a'@'%'", "ALTER USER a IDENTIFIED BY 'y'",
		"CREATE VIEW v AS SELECT 1", "CREATE OR REPLACE DEFINER=`root`@`localhost` VIEW v AS SELECT 1", "DROP VIEW v",
		"CREATE DEFINER=`root`@`localhost` PROCEDURE p() BEGIN SELECT 1; END",
		"CREATE FUNCTION f() RETURNS INT RETURN 1",
		"CREATE DEFINER=`root`@`localhost` TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1",
		"CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO DELETE FROM t", "DROP EVENT e", "DROP TRIGGER tr",
		"CREATE SEQUENCE s START WITH 1", "CREATE OR REPLACE SEQUENCE s", "DROP SEQUENCE s",
		"SET @a = 1", "FLUSH PRIVILEGES", "ANALYZE TABLE t", "OPTIMIZE TABLE t", "REPAIR TABLE t",
		"INSERT INTO t VALUES (1)", "# just a comment", "",
	} {
		cat := NewCatalog()
		mustApply(t, cat, "CREATE TABLE t (a INT)")
		ch, err := ApplyDDL(cat, "db", s)
		if err != nil || ch.Kind != ChangeNone || !ch.Parsed {
			t.Errorf("ApplyDDL(%q) = %s, %v; want none", s, jsonOf(ch), err)
		}
		if cat.Len() != 1 {
			t.Errorf("ApplyDDL(%q) changed the catalog", s)
		}
	}
}

func TestApplyDDLErrors(t *testing.T) {
	unparsed := []string{
		"CREATE TABLE t (a INT",
		"CREATE TABLE s AS SELECT 1 AS a",
		"CREATE TABLE v (a INT) WITH SYSTEM VERSIONING",
		"ALTER TABLE t ADD SYSTEM VERSIONING",
		"ALTER TABLE t ADD COLUMN x FANCYTYPE",
		"CREATE TABLE p (a INT, b INT, PERIOD FOR app (a, b))",
	}
	diverged := []string{
		"ALTER TABLE t DROP COLUMN nope",
		"ALTER TABLE t ADD COLUMN a INT",
		"ALTER TABLE t ADD PRIMARY KEY (a), ADD PRIMARY KEY (b)",
		"ALTER TABLE t MODIFY nope INT",
		"ALTER TABLE t ADD c INT AFTER nope",
		"ALTER TABLE t RENAME COLUMN a TO b",
		"CREATE TABLE d (a INT, a INT)",
		"CREATE TABLE d (a INT, PRIMARY KEY (nope))",
	}
	for _, s := range append(unparsed, diverged...) {
		cat := NewCatalog()
		mustApply(t, cat, "CREATE TABLE t (a INT, b INT)")
		before := jsonOf(cat.Tables())
		ch, err := ApplyDDL(cat, "db", s)
		var u *UnparsedDDLError
		var d *DDLError
		isUnparsed := slices.Contains(unparsed, s)
		switch {
		case err == nil:
			t.Errorf("ApplyDDL(%q) = %s, want an error", s, jsonOf(ch))
		case isUnparsed && (!errors.As(err, &u) || ch.Parsed || u.Stmt != s):
			t.Errorf("ApplyDDL(%q): %v (%T), want *UnparsedDDLError", s, err, err)
		case !isUnparsed && !errors.As(err, &d):
			t.Errorf("ApplyDDL(%q): %v (%T), want *DDLError", s, err, err)
		case !isUnparsed && !strings.Contains(err.Error(), "db."):
			t.Errorf("ApplyDDL(%q): error %q does not name the table", s, err)
		}
		if after := jsonOf(cat.Tables()); after != before {
			t.Errorf("ApplyDDL(%q) changed the catalog on error", s)
		}
	}
	if _, err := ApplyDDL(NewCatalog(), "", "CREATE TABLE t (a INT)"); err == nil {
		t.Error("an unqualified name without default schema must fail")
	}
}

// TestApplyDDLVersioned checks columns added to a system-versioned table
// (taken from its table map) go before its hidden row_start/row_end.
func TestApplyDDLVersioned(t *testing.T) {
	cat := NewCatalog()
	cat.Put(&Table{Schema: "db", Name: "v", Columns: []Column{
		{Name: "a", Type: "int"}, {Name: "row_start", Type: "timestamp", FSP: 6}, {Name: "row_end", Type: "timestamp", FSP: 6}},
		Key: []string{"a", "row_start", "row_end"}, KeyKind: KeyRow})
	mustApply(t, cat, "ALTER TABLE v ADD COLUMN b INT, ADD PRIMARY KEY (a)")
	if got := shape(mustGet(t, cat, "v")); got != "a:int,b:int?,row_start:timestamp,row_end:timestamp|primary:a,row_end" {
		t.Errorf("versioned table: %s", got)
	}
}

// TestApplyDDLWordsTiDBReserves: MariaDB takes rank, lead and the other
// window function names as plain column names; so does ApplyDDL (and the
// reshape planner after it), while rank() stays a function call.
func TestApplyDDLWordsTiDBReserves(t *testing.T) {
	cat := NewCatalog()
	cat.SetSchemaCharset("d", "utf8mb4")
	if _, err := ApplyDDL(cat, "d", "CREATE TABLE t (id INT PRIMARY KEY, rank INT, lead VARCHAR(10) /* lag */ NOT NULL DEFAULT 'x', `groups` INT)"); err != nil {
		t.Fatal(err)
	}
	old, _ := cat.Get("d", "t")
	if got := strings.Join(old.ColumnNames(), ","); got != "id,rank,lead,groups" {
		t.Fatalf("columns %s", got)
	}
	stmt := "ALTER TABLE t ADD COLUMN row_number BIGINT NULL AFTER rank, DROP COLUMN lead"
	if _, err := ApplyDDL(cat, "d", stmt); err != nil {
		t.Fatal(err)
	}
	nw, _ := cat.Get("d", "t")
	if got := strings.Join(nw.ColumnNames(), ","); got != "id,rank,row_number,groups" {
		t.Fatalf("columns after ALTER %s", got)
	}
	r, err := PlanReshape(old, nw, stmt)
	if err != nil {
		t.Fatalf("PlanReshape: %v", err)
	}
	if len(r.Columns) != 4 || r.Columns[2].From != "" || r.Columns[1].From != "rank" {
		t.Fatalf("reshape %+v", r)
	}
	if q, ok := quoteTiDBWords("SELECT rank() OVER (ORDER BY lead) FROM t"); !ok || q != "SELECT rank() OVER (ORDER BY `lead`) FROM t" {
		t.Fatalf("quoted %q %v", q, ok)
	}
}
