package schema

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/dbtrail/dbtrail/testsuite"
)

// integrationDDL is run on a real MariaDB; its binlog is then replayed
// through ApplyDDL and compared with information_schema.
var integrationDDL = []string{
	`CREATE TABLE all_types (
	  id BIGINT UNSIGNED NOT NULL PRIMARY KEY,
	  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED, mi MEDIUMINT, miu MEDIUMINT UNSIGNED,
	  i INT(11), iu INT UNSIGNED ZEROFILL, bi BIGINT, biu BIGINT UNSIGNED,
	  d DECIMAL(65,30), d0 DECIMAL, du DECIMAL(10,2) UNSIGNED, f FLOAT, db DOUBLE, b1 BIT(1), b64 BIT(64), bo BOOL,
	  dt DATE, dtm DATETIME(6), ts TIMESTAMP(6) NULL, tm TIME(6), y YEAR, ts0 TIMESTAMP NULL DEFAULT NULL,
	  c CHAR(10), vc VARCHAR(255), bn BINARY(8), vb VARBINARY(16),
	  tt TINYTEXT, tx TEXT, mt MEDIUMTEXT, lt LONGTEXT, tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB,
	  e ENUM('a','b','it''s','back\\slash'), s SET('x','y'), j JSON, u UUID, i6 INET6, i4 INET4, g GEOMETRY, pt POINT,
	  l1 VARCHAR(20) CHARACTER SET latin1, cyr VARCHAR(5) CHARACTER SET cp1251 COLLATE cp1251_general_ci,
	  uca VARCHAR(7) COLLATE utf8mb4_uca1400_ai_ci, nc NATIONAL CHAR(4), t100 TEXT(100), inv INT INVISIBLE,
	  /* a comment */ ser SERIAL
	) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 /*!50100 COMMENT 'x' */`,
	"CREATE TABLE nokey (a INT, b VARCHAR(10)) DEFAULT CHARSET=latin1",
	"CREATE TABLE uk (a INT NOT NULL, b INT, c INT NOT NULL, UNIQUE KEY ub (b), UNIQUE KEY uc (c), UNIQUE KEY ua (a))",
	"CREATE TABLE lk LIKE nokey",
	"CREATE OR REPLACE TABLE lk (x INT PRIMARY KEY)",
	"CREATE TABLE IF NOT EXISTS lk (y INT)",
	"ALTER TABLE nokey ADD COLUMN c INT FIRST, ADD COLUMN d DATETIME AFTER a, ADD (e INT, f INT)",
	"ALTER TABLE nokey DROP COLUMN f, MODIFY b VARCHAR(20) NOT NULL, CHANGE e e2 BIGINT UNSIGNED",
	"ALTER TABLE nokey RENAME COLUMN e2 TO e3, ALTER COLUMN c SET DEFAULT 5",
	"ALTER TABLE nokey ADD UNIQUE KEY (b)",
	"ALTER TABLE nokey ADD PRIMARY KEY (a)",
	"ALTER TABLE nokey DROP PRIMARY KEY",
	"DROP INDEX b ON nokey",
	"CREATE UNIQUE INDEX ux ON nokey (c, a)",
	"ALTER TABLE nokey ADD COLUMN IF NOT EXISTS c INT, DROP COLUMN IF EXISTS zz, ADD COLUMN IF NOT EXISTS u2 UUID, ADD tt TINYTEXT",
	"ALTER TABLE nokey CONVERT TO CHARACTER SET utf8mb4",
	"ALTER TABLE nokey DEFAULT CHARSET latin1, ADD COLUMN z VARCHAR(3)",
	"RENAME TABLE nokey TO tmp, uk TO nokey, tmp TO uk",
	"ALTER TABLE lk RENAME TO lk2",
	"ALTER TABLE lk2 RENAME TO lk3, ADD COLUMN q INT",
	"TRUNCATE lk3",
	"TRUNCATE TABLE lk3",
	"CREATE TABLE dropme (a INT)",
	"DROP TABLE IF EXISTS dropme, nonexist",
	"CREATE TEMPORARY TABLE tmpx (a INT)",
	"DROP TEMPORARY TABLE tmpx",
	"CREATE DATABASE other CHARACTER SET latin1",
	"CREATE TABLE other.o (a VARCHAR(3))",
	"RENAME TABLE other.o TO dbt.o2",
	"CREATE TABLE other.o3 (a INT)",
	"DROP DATABASE other",
	"CREATE VIEW v AS SELECT 1 AS one",
	"CREATE PROCEDURE p() BEGIN SELECT 1; END",
	"CREATE TRIGGER trg BEFORE INSERT ON lk3 FOR EACH ROW SET NEW.q = 1",
	"CREATE SEQUENCE seq1",
	"ALTER TABLE all_types ADD COLUMN added_ip INET6 AFTER id, ADD INDEX (ti)",
	"ALTER TABLE all_types WAIT 5 ADD COLUMN IF NOT EXISTS g2 LINESTRING, DROP COLUMN IF EXISTS nope",
	"ALTER TABLE o2 ADD COLUMN w VARCHAR(2), ENGINE=InnoDB",
	"CREATE TABLE uca_t (a VARCHAR(4), b TEXT) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_uca1400_ai_ci",
	"CREATE TABLE sel AS SELECT 1 AS a, 'x' AS b, NOW(6) AS c",
	"CREATE TABLE sel2 (id INT PRIMARY KEY) SELECT 2 AS id, 3.5 AS c",
	"CREATE OR REPLACE TABLE sel3 (UNIQUE KEY (u)) IGNORE SELECT u FROM all_types",
	"CREATE TABLE vt (a INT, b VARCHAR(3)) WITH SYSTEM VERSIONING", // unparsed: falls back to the table map
	"INSERT INTO vt VALUES (1, 'x')",
	"SET SESSION system_versioning_alter_history=KEEP",
	"ALTER TABLE vt ADD COLUMN c INT, ADD PRIMARY KEY (a)", // goes before the hidden row_start/row_end
	"INSERT INTO vt VALUES (2, 'y', 3)",
	"INSERT INTO all_types (id, u, i6, i4, pt, g) VALUES (1, UUID(), '::1', '127.0.0.1', POINT(1,2), POINT(3,4))",
	"INSERT INTO uk (a, b) VALUES (1, 'b')",
	"INSERT INTO nokey VALUES (1, 2, 3)",
	"INSERT INTO lk3 VALUES (1, 2)",
	"INSERT INTO o2 VALUES ('a', 'b')",
	"INSERT INTO uca_t VALUES ('a', 'b')",
}

// TestAgainstMariaDB runs integrationDDL on a real server and checks that
// replaying its binlog through ApplyDDL (and FromTableMap) gives the
// definitions information_schema shows, as does SHOW CREATE TABLE's text.
// Skipped only with -short (make unit); a server that cannot start fails it.
func TestAgainstMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a MariaDB server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	src := testsuite.StartSource(t)
	if err := src.Exec(ctx, "CREATE DATABASE dbt"); err != nil {
		t.Fatal(err)
	}
	db, err := src.DB(ctx, "dbt")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	start, err := LoadFromServer(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	var file string
	var pos int64
	var ignore sql.NullString
	if err := db.QueryRowContext(ctx, "SHOW MASTER STATUS").Scan(&file, &pos, &ignore, &ignore); err != nil {
		t.Fatal(err)
	}
	for _, s := range integrationDDL {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	want, err := LoadFromServer(ctx, db, []string{"dbt"})
	if err != nil {
		t.Fatal(err)
	}

	cat := start.Clone()
	var basename string
	if err := db.QueryRowContext(ctx, "SELECT @@log_bin_basename").Scan(&basename); err != nil {
		t.Fatal(err)
	}
	p := replication.NewBinlogParser()
	p.SetFlavor("mariadb")
	maps := 0
	fellBack := map[string]bool{}
	err = p.ParseFile(filepath.Join(filepath.Dir(basename), file), pos, func(e *replication.BinlogEvent) error {
		switch ev := e.Event.(type) {
		case *replication.QueryEvent:
			ch, err := ApplyDDL(cat, string(ev.Schema), string(ev.Query))
			var u *UnparsedDDLError
			switch {
			case errors.As(err, &u) && !ch.Parsed && strings.Contains(u.Stmt, "SYSTEM VERSIONING"):
				t.Logf("falls back: %v", err)
			case err != nil:
				t.Errorf("ApplyDDL: %v", err)
			}
		case *replication.TableMapEvent:
			maps++
			def, ok := cat.Get(string(ev.Schema), string(ev.Table))
			if !ok { // the caller's fallback for statements ApplyDDL could not parse
				got, err := FromTableMap(string(ev.Schema), string(ev.Table), ev, nil)
				if err != nil {
					t.Errorf("FromTableMap: %v", err)
					return nil
				}
				fellBack[got.Name] = true
				cat.Put(got)
				return nil
			}
			if err := CheckTableMap(def, ev); err != nil {
				t.Errorf("CheckTableMap: %v", err)
			}
			got, err := FromTableMap(def.Schema, def.Name, ev, def)
			if err != nil {
				t.Errorf("FromTableMap: %v", err)
			} else if !slices.EqualFunc(got.Columns, def.Columns, sameColumn) {
				t.Errorf("FromTableMap(%s) columns:\n got %s\nwant %s", def.QualifiedName(), js(got.Columns), js(def.Columns))
			} else if got.KeyKind != def.KeyKind || !slices.Equal(got.Key, def.Key) {
				t.Errorf("FromTableMap(%s) key %s %v, want %s %v", def.QualifiedName(), got.KeyKind, got.Key, def.KeyKind, def.Key)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if maps < 7 {
		t.Errorf("saw %d table maps, want at least 7", maps)
	}
	if !fellBack["vt"] {
		t.Errorf("the system-versioned table was not taken from its table map")
	}
	compareCatalogs(t, "binlog replay", cat, want, fellBack)

	shown := NewCatalog()
	shown.SetSchemaCharset("dbt", want.SchemaCharset("dbt"))
	for _, tb := range want.Tables() {
		var name, create string
		if err := db.QueryRowContext(ctx, "SHOW CREATE TABLE `"+tb.Name+"`").Scan(&name, &create); err != nil {
			t.Fatal(err)
		}
		if _, err := ApplyDDL(shown, "dbt", create); err != nil && !fellBack[tb.Name] {
			t.Errorf("SHOW CREATE TABLE text: %v", err)
		} else if err != nil {
			shown.Put(tb)
		}
	}
	compareCatalogs(t, "SHOW CREATE TABLE", shown, want, nil)
}

func sameColumn(a, b Column) bool { return js(a) == js(b) }

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// compareCatalogs compares the dbt tables of got with want: columns, key,
// key kind and default charset (unless taken from a table map, which may
// not tell it).
func compareCatalogs(t *testing.T, what string, got, want *Catalog, fromMap map[string]bool) {
	t.Helper()
	var names []string
	for _, tb := range got.SchemaTables("dbt") {
		names = append(names, tb.Name)
	}
	var wantNames []string
	for _, tb := range want.SchemaTables("dbt") {
		wantNames = append(wantNames, tb.Name)
	}
	if !slices.Equal(names, wantNames) {
		t.Errorf("%s: tables %v, want %v", what, names, wantNames)
	}
	for _, w := range want.SchemaTables("dbt") {
		g, ok := got.Get("dbt", w.Name)
		if !ok {
			continue
		}
		for i := range max(len(g.Columns), len(w.Columns)) {
			var gc, wc Column
			if i < len(g.Columns) {
				gc = g.Columns[i]
			}
			if i < len(w.Columns) {
				wc = w.Columns[i]
			}
			if !sameColumn(gc, wc) {
				t.Errorf("%s: %s column %d: got %s, want %s", what, w.QualifiedName(), i+1, js(gc), js(wc))
			}
		}
		if g.KeyKind != w.KeyKind || !slices.Equal(g.Key, w.Key) || (g.Charset != w.Charset && !fromMap[w.Name]) {
			t.Errorf("%s: %s: key %s %v charset %q, want %s %v charset %q", what, w.QualifiedName(),
				g.KeyKind, g.Key, g.Charset, w.KeyKind, w.Key, w.Charset)
		}
	}
}
