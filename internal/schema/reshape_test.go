package schema

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// reshapeBase is the table the PlanReshape cases alter.
const reshapeBase = `CREATE TABLE t (
	id INT NOT NULL PRIMARY KEY,
	a INT, b VARCHAR(10), c CHAR(5), d DECIMAL(10,2), e ENUM('x','y'), s SET('p','q','r'),
	dt DATETIME(3), tm TIME, bt BIT(5), bn BINARY(4), u INT UNSIGNED, nn INT NOT NULL,
	g INT AS (a + 1) VIRTUAL,
	UNIQUE KEY ua (nn)
) DEFAULT CHARSET=utf8mb4`

// planFor applies create then stmt with ApplyDDL and plans the reshape of
// table t between the two stored definitions.
func planFor(t *testing.T, create, stmt string) (Reshape, error) {
	t.Helper()
	cat := NewCatalog()
	cat.SetSchemaCharset("d", "utf8mb4")
	if _, err := ApplyDDL(cat, "d", create); err != nil {
		t.Fatalf("%s: %v", create, err)
	}
	old, _ := cat.Get("d", "t")
	if _, err := ApplyDDL(cat, "d", stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	nt, ok := cat.Get("d", "t")
	if !ok {
		for _, tb := range cat.Tables() {
			nt = tb // renamed
		}
	}
	os, err := old.Stored()
	if err != nil {
		t.Fatal(err)
	}
	ns, err := nt.Stored()
	if err != nil {
		t.Fatal(err)
	}
	return PlanReshape(os, ns, stmt)
}

// sources renders a reshape as "name<-from" and "name=value" items.
func sources(r Reshape) string {
	var out []string
	for _, c := range r.Columns {
		switch {
		case c.From != "" && c.From == c.Name:
			out = append(out, c.Name)
		case c.From != "":
			out = append(out, c.Name+"<-"+c.From)
		case c.Value == nil:
			out = append(out, c.Name+"=NULL")
		default:
			out = append(out, c.Name+"="+quoteForTest(*c.Value))
		}
	}
	return strings.Join(out, " ")
}

func quoteForTest(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			b.WriteString("\\x" + "0123456789abcdef"[s[i]>>4:s[i]>>4+1] + "0123456789abcdef"[s[i]&15:s[i]&15+1])
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String() + "'"
}

const allKept = "id a b c d e s dt tm bt bn u nn"

func TestPlanReshapeMetadataOnly(t *testing.T) {
	for _, stmt := range []string{
		"ALTER TABLE t ADD INDEX ia (a)",
		"CREATE INDEX ib ON t (b)",
		"ALTER TABLE t ADD INDEX ia (a), DROP INDEX ua",
		"DROP INDEX ua ON t",
		"ALTER TABLE t COMMENT 'hello'",
		"ALTER TABLE t AUTO_INCREMENT = 100",
		"ALTER TABLE t ENGINE = InnoDB",
		"ALTER TABLE t ENGINE = Aria, ROW_FORMAT = DYNAMIC",
		"ALTER TABLE t ALTER COLUMN a SET DEFAULT 5",
		"ALTER TABLE t ALTER COLUMN a DROP DEFAULT",
		"ALTER TABLE t MODIFY a INT DEFAULT 7 COMMENT 'x'",
		"ALTER TABLE t ADD INDEX ia (a), ALGORITHM=INSTANT, LOCK=NONE",
		"ALTER TABLE t FORCE",
		"ALTER TABLE t DEFAULT CHARSET = latin1",
		"ALTER TABLE t ADD COLUMN g2 INT AS (a * 2) VIRTUAL",
		"ALTER TABLE t DROP COLUMN g",
		"ALTER TABLE t ADD CONSTRAINT ck CHECK (a > 0)",
		"ALTER ONLINE TABLE t ADD INDEX ia (a)",
		"ALTER TABLE t RENAME TO t2",
		"ALTER TABLE t PAGE_COMPRESSED = 1, ADD INDEX ia (a)",
		"ALTER TABLE t ENCRYPTED = YES, ADD INDEX ia (a), ENGINE = InnoDB", // parsed on the retry
	} {
		r, err := planFor(t, reshapeBase, stmt)
		if err != nil {
			t.Errorf("%s: %v", stmt, err)
			continue
		}
		if got := sources(r); got != allKept || !r.SameRows() || r.KeyChanged {
			t.Errorf("%s: %s (same rows %v, key changed %v), want every column kept", stmt, got, r.SameRows(), r.KeyChanged)
		}
	}
}

func TestPlanReshapeFolds(t *testing.T) {
	for _, c := range []struct{ stmt, want string }{
		{"ALTER TABLE t ADD COLUMN z INT", allKept + " z=NULL"},
		{"ALTER TABLE t ADD COLUMN z VARCHAR(5) DEFAULT ''", allKept + " z=''"},
		{"ALTER TABLE t ADD COLUMN z VARCHAR(5) DEFAULT NULL", allKept + " z=NULL"},
		{"ALTER TABLE t ADD COLUMN z VARCHAR(5) NOT NULL", allKept + " z=''"},
		{"ALTER TABLE t ADD COLUMN z DECIMAL(10,2) DEFAULT 1.5", allKept + " z='1.50'"},
		{"ALTER TABLE t ADD COLUMN z DECIMAL(10,2) DEFAULT -3", allKept + " z='-3.00'"},
		{"ALTER TABLE t ADD COLUMN z DECIMAL(5,0) DEFAULT '42'", allKept + " z='42'"},
		{"ALTER TABLE t ADD COLUMN z DECIMAL(10,2) NOT NULL", allKept + " z='0.00'"},
		{"ALTER TABLE t ADD COLUMN z DATETIME(3) DEFAULT '2026-01-02 03:04:05.5'", allKept + " z='2026-01-02 03:04:05.500'"},
		{"ALTER TABLE t ADD COLUMN z DATETIME DEFAULT '2026-01-02'", allKept + " z='2026-01-02 00:00:00'"},
		{"ALTER TABLE t ADD COLUMN z DATE DEFAULT '2024-02-29'", allKept + " z='2024-02-29'"},
		{"ALTER TABLE t ADD COLUMN z DATE NOT NULL", allKept + " z='0000-00-00'"},
		{"ALTER TABLE t ADD COLUMN z TIME(2) DEFAULT '-1:02:03'", allKept + " z='-01:02:03.00'"},
		{"ALTER TABLE t ADD COLUMN z TIMESTAMP NULL DEFAULT NULL", allKept + " z=NULL"},
		{"ALTER TABLE t ADD COLUMN z TIMESTAMP NOT NULL DEFAULT '0000-00-00 00:00:00'", allKept + " z='0000-00-00 00:00:00'"},
		{"ALTER TABLE t ADD COLUMN z ENUM('a','b') DEFAULT 'b'", allKept + " z='b'"},
		{"ALTER TABLE t ADD COLUMN z ENUM('a','b') NOT NULL", allKept + " z='a'"},
		{"ALTER TABLE t ADD COLUMN z SET('a','b','c') DEFAULT 'c,a'", allKept + " z='a,c'"},
		{"ALTER TABLE t ADD COLUMN z SET('a','b','c') DEFAULT ''", allKept + " z=''"},
		{"ALTER TABLE t ADD COLUMN z BIT(5) DEFAULT b'101'", allKept + ` z='\x05'`},
		{"ALTER TABLE t ADD COLUMN z BIT(12) DEFAULT 5", allKept + ` z='\x00\x05'`},
		{"ALTER TABLE t ADD COLUMN z CHAR(5) DEFAULT 'ab  '", allKept + " z='ab'"},
		{"ALTER TABLE t ADD COLUMN z VARCHAR(5) DEFAULT 'ab  '", allKept + " z='ab  '"},
		{"ALTER TABLE t ADD COLUMN z BINARY(3) DEFAULT 'a'", allKept + ` z='a\x00\x00'`},
		{"ALTER TABLE t ADD COLUMN z VARBINARY(3) DEFAULT x'ff00'", allKept + ` z='\xff\x00'`},
		{"ALTER TABLE t ADD COLUMN z TINYINT UNSIGNED DEFAULT 255", allKept + " z='255'"},
		{"ALTER TABLE t ADD COLUMN z BIGINT DEFAULT -9223372036854775808", allKept + " z='-9223372036854775808'"},
		{"ALTER TABLE t ADD COLUMN z INT DEFAULT TRUE", allKept + " z='1'"},
		{"ALTER TABLE t ADD COLUMN z INT NOT NULL", allKept + " z='0'"},
		{"ALTER TABLE t ADD COLUMN z DOUBLE DEFAULT 0.1", allKept + " z='0.1'"},
		{"ALTER TABLE t ADD COLUMN z FLOAT DEFAULT 0.1", allKept + " z='0.10000000149011612'"},
		{"ALTER TABLE t ADD COLUMN z YEAR DEFAULT 2024", allKept + " z='2024'"},
		{"ALTER TABLE t ADD COLUMN z TEXT DEFAULT 'note'", allKept + " z='note'"},
		{"ALTER TABLE t ADD COLUMN z INT FIRST", "z=NULL " + allKept},
		{"ALTER TABLE t ADD COLUMN z INT DEFAULT 3 AFTER a", "id a z='3' b c d e s dt tm bt bn u nn"},
		{"ALTER TABLE t ADD COLUMN (y INT, z INT DEFAULT 1)", allKept + " y=NULL z='1'"},
		{"ALTER TABLE t DROP COLUMN b", "id a c d e s dt tm bt bn u nn"},
		{"ALTER TABLE t DROP COLUMN nn", "id a b c d e s dt tm bt bn u"}, // in a unique index, not the key
		{"ALTER TABLE t DROP COLUMN b, ADD COLUMN b INT DEFAULT 1", "id a c d e s dt tm bt bn u nn b='1'"},
		{"ALTER TABLE t RENAME COLUMN a TO a2", "id a2<-a b c d e s dt tm bt bn u nn"},
		{"ALTER TABLE t CHANGE a a2 INT", "id a2<-a b c d e s dt tm bt bn u nn"},
		{"ALTER TABLE t MODIFY b VARCHAR(10) FIRST", "b id a c d e s dt tm bt bn u nn"},
		{"ALTER TABLE t MODIFY a INT AFTER nn", "id b c d e s dt tm bt bn u nn a"},
		{"ALTER TABLE t MODIFY a BIGINT", allKept},
		{"ALTER TABLE t MODIFY u BIGINT UNSIGNED", allKept},
		{"ALTER TABLE t MODIFY u BIGINT", allKept},
		{"ALTER TABLE t MODIFY b TEXT", allKept},
		{"ALTER TABLE t MODIFY b VARCHAR(63) CHARACTER SET utf8mb4, MODIFY c CHAR(5) CHARACTER SET utf8mb4", allKept},
		{"ALTER TABLE t MODIFY b VARCHAR(20)", allKept},
		{"ALTER TABLE t MODIFY c CHAR(8)", allKept},
		{"ALTER TABLE t MODIFY d DECIMAL(12,2)", allKept},
		{"ALTER TABLE t MODIFY d DECIMAL(12,4)", allKept},
		{"ALTER TABLE t MODIFY dt DATETIME(6), MODIFY tm TIME(3)", allKept},
		{"ALTER TABLE t MODIFY e ENUM('x','y','z')", allKept},
		{"ALTER TABLE t MODIFY s SET('p','q','r','w')", allKept},
		{"ALTER TABLE t MODIFY bt BIT(9), MODIFY bn BINARY(6)", allKept},
		{"ALTER TABLE t MODIFY nn INT NULL", allKept},
		{"ALTER TABLE t ADD COLUMN z INT DEFAULT 1 FIRST, DROP COLUMN b, RENAME COLUMN c TO c2, MODIFY a BIGINT AFTER d",
			"z='1' id c2<-c d a e s dt tm bt bn u nn"},
	} {
		r, err := planFor(t, reshapeBase, c.stmt)
		if err != nil {
			t.Errorf("%s: %v", c.stmt, err)
			continue
		}
		if got := sources(r); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.stmt, got, c.want)
		}
		if r.SameRows() {
			t.Errorf("%s: SameRows, want a reshape", c.stmt)
		}
	}
}

func TestPlanReshapeKeyChanges(t *testing.T) {
	for _, c := range []struct{ create, stmt string }{
		{"CREATE TABLE t (a INT NOT NULL, b INT NOT NULL, c INT, UNIQUE KEY ub (b))", "ALTER TABLE t ADD PRIMARY KEY (a)"},
		{"CREATE TABLE t (a INT NOT NULL, b INT NOT NULL, c INT, UNIQUE KEY ub (b))", "ALTER TABLE t DROP INDEX ub"},
		{"CREATE TABLE t (a INT NOT NULL, b INT, c INT)", "CREATE UNIQUE INDEX ua ON t (a)"},
		{"CREATE TABLE t (a INT NOT NULL PRIMARY KEY, b INT NOT NULL)", "ALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (a, b)"},
	} {
		create, stmt := c.create, c.stmt
		r, err := planFor(t, create, stmt)
		if err != nil {
			t.Errorf("%s: %v", stmt, err)
			continue
		}
		if !r.SameRows() || !r.KeyChanged {
			t.Errorf("%s: same rows %v, key changed %v; want the same rows under another key", stmt, r.SameRows(), r.KeyChanged)
		}
	}
}

func TestPlanReshapeRedumps(t *testing.T) {
	for _, c := range []struct{ stmt, reason string }{
		{"ALTER TABLE t MODIFY a VARCHAR(10)", "column a: type int → varchar(10)"},
		{"ALTER TABLE t MODIFY a SMALLINT", "column a: type int → smallint"},
		{"ALTER TABLE t MODIFY a INT UNSIGNED", "column a: type int → int unsigned"},
		{"ALTER TABLE t MODIFY u INT", "column u: type int unsigned → int"},
		{"ALTER TABLE t MODIFY a BIGINT UNSIGNED", "column a: type int → bigint unsigned"},
		{"ALTER TABLE t MODIFY bn BLOB", "column bn: type binary(4) → blob"},
		{"ALTER TABLE t MODIFY b VARCHAR(5)", "column b: type varchar(10)"},
		{"ALTER TABLE t MODIFY c VARCHAR(10)", "column c: type char(5)"},
		{"ALTER TABLE t MODIFY d DECIMAL(10,1)", "column d: type decimal(10,2)"},
		{"ALTER TABLE t MODIFY d DECIMAL(10,3)", "column d: type decimal(10,2)"},
		{"ALTER TABLE t MODIFY e ENUM('y','x')", "column e: type enum"},
		{"ALTER TABLE t MODIFY dt DATETIME", "column dt: type datetime(3)"},
		{"ALTER TABLE t MODIFY b VARCHAR(10) CHARACTER SET latin1", "column b: character set utf8mb4 → latin1"},
		{"ALTER TABLE t MODIFY a INT NOT NULL", "column a: NULL → NOT NULL"},
		{"ALTER TABLE t CONVERT TO CHARACTER SET latin1", "CONVERT TO CHARACTER SET converts the values of column b"},
		{"ALTER TABLE t ENGINE = BLACKHOLE", "ENGINE=BLACKHOLE"},
		{"ALTER TABLE t ENCRYPTED = YES, ENGINE = BLACKHOLE", "ENGINE=BLACKHOLE"},
		{"ALTER TABLE t ADD COLUMN z INT DEFAULT 5, ENCRYPTED = YES", "expressions cannot be parsed"},
		{"ALTER TABLE t ADD COLUMN z DATETIME DEFAULT CURRENT_TIMESTAMP", "column z: DEFAULT CURRENT_TIMESTAMP() is not a constant"},
		{"ALTER TABLE t ADD COLUMN z INT DEFAULT (a + 1)", "default is unknown"},
		{"ALTER TABLE t ADD COLUMN z INT AUTO_INCREMENT UNIQUE", "AUTO_INCREMENT"},
		{"ALTER TABLE t ADD COLUMN z INT AS (a * 2) STORED", "STORED generated"},
		{"ALTER TABLE t ADD COLUMN z TIMESTAMP", "explicit_defaults_for_timestamp"},
		{"ALTER TABLE t ADD COLUMN z TIMESTAMP NULL DEFAULT '2026-01-01 00:00:00'", "stored form"},
		{"ALTER TABLE t ADD COLUMN z JSON NOT NULL", "NOT NULL json"},
		{"ALTER TABLE t ADD COLUMN z DECIMAL(10,2) DEFAULT 1.555", "stored form of DEFAULT 1.555"},
		{"ALTER TABLE t ADD COLUMN z DECIMAL(3,2) DEFAULT 12.5", "stored form"},
		{"ALTER TABLE t ADD COLUMN z INT DEFAULT 1.5", "stored form"},
		{"ALTER TABLE t ADD COLUMN z TINYINT DEFAULT 200", "stored form"},
		{"ALTER TABLE t ADD COLUMN z DATETIME DEFAULT '2026-1-2'", "stored form"},
		{"ALTER TABLE t ADD COLUMN z DATETIME DEFAULT '2026-01-02 03:04:05.5'", "stored form"},
		{"ALTER TABLE t ADD COLUMN z DATE DEFAULT '2026-02-30'", "stored form"},
		{"ALTER TABLE t ADD COLUMN z ENUM('a','b') DEFAULT 'A'", "stored form"},
		{"ALTER TABLE t ADD COLUMN z ENUM('a','b') DEFAULT 2", "stored form"},
		{"ALTER TABLE t ADD COLUMN z SET('a','b') DEFAULT 3", "stored form"},
		{"ALTER TABLE t ADD COLUMN z BIT(2) DEFAULT b'101'", "stored form"},
		{"ALTER TABLE t ADD COLUMN z VARCHAR(3) DEFAULT 'abcd'", "stored form"},
		{"ALTER TABLE t ADD COLUMN z VARCHAR(3) DEFAULT 'é'", "stored form"},
		{`ALTER TABLE t ADD COLUMN z VARCHAR(3) DEFAULT 'a\\b'`, "backslash"},
		{"ALTER TABLE t ADD COLUMN z FLOAT(7,2) DEFAULT 1.5", "rounds its default"},
		{"ALTER TABLE t ADD COLUMN z DOUBLE DEFAULT -0.0", "stored form"},
		{"ALTER TABLE t ADD COLUMN z UUID DEFAULT '00000000-0000-0000-0000-000000000000'", "stored form"},
		{"ALTER TABLE t DROP COLUMN id", "column id is part of the table's key"},
		{"ALTER TABLE t ADD COLUMN z INT AFTER g", "not a stored column"},
		{"ALTER TABLE t MODIFY g INT", "generated column g becomes a stored column"},
		{"ALTER TABLE t MODIFY a INT AS (id) VIRTUAL", "becomes a generated column"},
		{"ALTER TABLE t ADD COLUMN z INT, MODIFY z BIGINT", "redefined by the statement that adds it"},
		{"ALTER IGNORE TABLE t ADD UNIQUE KEY (a)", "ALTER IGNORE"},
		{"ALTER TABLE t PARTITION BY HASH (id) PARTITIONS 2", "partition"},
		{"ALTER TABLE t TRUNCATE PARTITION p0", "partition"},
		{"RENAME TABLE t TO t3", "not an ALTER TABLE"},
	} {
		r, err := planFor(t, reshapeBase, c.stmt)
		var re *RedumpError
		if !errors.As(err, &re) {
			t.Errorf("%s: %s, %v; want a redump", c.stmt, sources(r), err)
			continue
		}
		if !strings.Contains(re.Reason, c.reason) || re.Table != "d.t" || re.Stmt != c.stmt {
			t.Errorf("%s: %v; want the reason to say %q", c.stmt, err, c.reason)
		}
	}
}

// TestPlanReshapeToText: VARCHAR becomes a TEXT that holds its longest
// value in bytes, VARBINARY a BLOB that holds its length.
func TestPlanReshapeToText(t *testing.T) {
	const create = "CREATE TABLE t (a VARCHAR(100) CHARACTER SET utf8mb4, b VARCHAR(100) CHARACTER SET latin1, c VARBINARY(300))"
	for _, c := range []struct {
		stmt   string
		redump bool
	}{
		{"ALTER TABLE t MODIFY a TINYTEXT CHARACTER SET utf8mb4", true}, // 400 bytes > 255
		{"ALTER TABLE t MODIFY a TEXT CHARACTER SET utf8mb4", false},
		{"ALTER TABLE t MODIFY b TINYTEXT CHARACTER SET latin1", false},
		{"ALTER TABLE t MODIFY b TINYTEXT CHARACTER SET utf8mb4", true},
		{"ALTER TABLE t MODIFY c TINYBLOB", true},
		{"ALTER TABLE t MODIFY c BLOB", false},
	} {
		_, err := planFor(t, create, c.stmt)
		var re *RedumpError
		if errors.As(err, &re) != c.redump || (err != nil && re == nil) {
			t.Errorf("%s: %v, want a redump: %v", c.stmt, err, c.redump)
		}
	}
}

// TestPlanReshapeKeyless: every column of a table without a key is its
// "key", yet dropping one keeps the other values: it folds.
func TestPlanReshapeKeyless(t *testing.T) {
	r, err := planFor(t, "CREATE TABLE t (a INT, b INT, c INT)", "ALTER TABLE t DROP COLUMN b, ADD COLUMN d INT DEFAULT 1 FIRST")
	if err != nil {
		t.Fatal(err)
	}
	if got := sources(r); got != "d='1' a c" || !r.KeyChanged {
		t.Errorf("got %s (key changed %v), want d='1' a c with the key changed", got, r.KeyChanged)
	}
}

// TestPlanReshapeChecksDefinitions: a statement that does not explain the
// new definition is a redump, whatever its clauses say.
func TestPlanReshapeChecksDefinitions(t *testing.T) {
	cat := NewCatalog()
	if _, err := ApplyDDL(cat, "d", "CREATE TABLE t (a INT, b INT)"); err != nil {
		t.Fatal(err)
	}
	old, _ := cat.Get("d", "t")
	other := old.Clone()
	other.Columns[1].Type = "smallint"
	if _, err := PlanReshape(old, other, "ALTER TABLE t ADD INDEX (a)"); err == nil || !strings.Contains(err.Error(), "type int → smallint") {
		t.Errorf("got %v, want a redump naming the changed type", err)
	}
	other = old.Clone()
	other.Columns = other.Columns[:1]
	if _, err := PlanReshape(old, other, "ALTER TABLE t COMMENT 'x'"); err == nil || !strings.Contains(err.Error(), "leaves columns (a, b)") {
		t.Errorf("got %v, want a redump naming the columns", err)
	}
	if _, err := PlanReshape(old, old, "ALTER TABLE u ADD INDEX (a)"); err == nil || !strings.Contains(err.Error(), "names table u") {
		t.Errorf("got %v, want a redump naming the other table", err)
	}
	if _, err := PlanReshape(old, old, "ALTER TABLE t ADD"); err == nil || !strings.Contains(err.Error(), "cannot parse") {
		t.Errorf("got %v, want a parse redump", err)
	}
}

// TestPlanReshapeAnyStatement: every statement of the DDL corpus, on any
// table, is planned or refused with a RedumpError; none panics or returns
// another error.
func TestPlanReshapeAnyStatement(t *testing.T) {
	cat := NewCatalog()
	cat.SetSchemaCharset("d", "utf8mb4")
	if _, err := ApplyDDL(cat, "d", reshapeBase); err != nil {
		t.Fatal(err)
	}
	old, _ := cat.Get("d", "t")
	stored, err := old.Stored()
	if err != nil {
		t.Fatal(err)
	}
	stmts := append([]string{"", ";", "ALTER", "ALTER TABLE", "ALTER TABLE t", "ALTER TABLE t ADD COLUMN", "CREATE INDEX i ON t",
		"ALTER TABLE t MODIFY a", "ALTER TABLE t ADD COLUMN z INT AFTER", "ALTER TABLE t, ADD INDEX (a)"}, integrationDDL...)
	for _, s := range stmts {
		for _, r := range []string{s, strings.ReplaceAll(s, "nokey", "t"), strings.ReplaceAll(s, "all_types", "t")} {
			_, err := PlanReshape(stored, stored, r)
			var re *RedumpError
			if err != nil && !errors.As(err, &re) {
				t.Errorf("%s: %v, want a RedumpError", r, err)
			}
		}
	}
}

// TestReshapeJSON: a reshape crosses workflow boundaries as JSON; an empty
// default and NULL stay apart.
func TestReshapeJSON(t *testing.T) {
	r, err := planFor(t, reshapeBase, "ALTER TABLE t ADD COLUMN y VARCHAR(3) DEFAULT '', ADD COLUMN z VARCHAR(3), MODIFY nn INT NULL")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Reshape
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if sources(back) != sources(r) || !slices.Equal(back.OldColumns, r.OldColumns) || back.SameRows() || !back.Columns[12].Retyped {
		t.Errorf("JSON %s reads back as %s, want %s", b, sources(back), sources(r))
	}
	if !strings.Contains(string(b), `{"name":"y","value":""}`) || !strings.Contains(string(b), `{"name":"z"}`) {
		t.Errorf("JSON %s: want y with an empty value and z without one", b)
	}
}
