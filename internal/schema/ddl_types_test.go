package schema

import (
	"encoding/json"
	"testing"
)

// mustApply applies statements in order and fails the test on any error.
func mustApply(t *testing.T, cat *Catalog, stmts ...string) Change {
	t.Helper()
	var ch Change
	for _, s := range stmts {
		var err error
		ch, err = ApplyDDL(cat, "db", s)
		if err != nil {
			t.Fatalf("ApplyDDL(%q): %v", s, err)
		}
		if !ch.Parsed {
			t.Fatalf("ApplyDDL(%q): Parsed=false without error", s)
		}
	}
	return ch
}

func mustGet(t *testing.T, cat *Catalog, name string) *Table {
	t.Helper()
	tb, ok := cat.Get("db", name)
	if !ok {
		t.Fatalf("table db.%s not in catalog", name)
	}
	return tb
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestApplyDDLColumnTypes covers the type of every MariaDB column.
func TestApplyDDLColumnTypes(t *testing.T) {
	cat := NewCatalog()
	mustApply(t, cat, `CREATE TABLE ty (
	  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT(5) UNSIGNED, mi MEDIUMINT, miu MEDIUMINT UNSIGNED,
	  i INT(11) NOT NULL, iu INTEGER UNSIGNED ZEROFILL, bi BIGINT, biu BIGINT(20) UNSIGNED,
	  d DECIMAL(65,30), d0 DECIMAL, d5 NUMERIC(5), du DEC(10,2) UNSIGNED,
	  f FLOAT, f30 FLOAT(30), db DOUBLE, dp DOUBLE PRECISION UNSIGNED, r REAL,
	  b1 BIT, b64 BIT(64), bo BOOL, bn2 BOOLEAN,
	  dt DATE, dtm DATETIME, dtm6 DATETIME(6), ts6 TIMESTAMP(6) NULL, tm6 TIME(6), y YEAR, y4 YEAR(4),
	  c CHAR(10), c1 CHAR, vc VARCHAR(255), bn BINARY(8), vb VARBINARY(16), cb CHAR(3) BINARY, cbyte CHAR(2) BYTE,
	  tt TINYTEXT, tx TEXT, mt MEDIUMTEXT, lt LONGTEXT, lv LONG VARCHAR, t100 TEXT(100),
	  tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB, b300 BLOB(300), lvb LONG VARBINARY,
	  e ENUM('a','b','it''s','back\\slash'), s SET('x','y'), j JSON,
	  u UUID, i6 INET6, i4 INET4,
	  g GEOMETRY, pt POINT, ls LINESTRING, pg POLYGON, mpt MULTIPOINT, mls MULTILINESTRING, mpg MULTIPOLYGON, gc GEOMETRYCOLLECTION,
	  nc NATIONAL CHAR(4), nv NVARCHAR(5), l1 VARCHAR(20) CHARACTER SET latin1, cyr CHAR(5) CHARSET cp1251,
	  co VARCHAR(3) COLLATE latin1_swedish_ci, uca VARCHAR(7) COLLATE utf8mb4_uca1400_ai_ci, u3 VARCHAR(2) CHARACTER SET utf8,
	  bin VARCHAR(4) CHARACTER SET binary, el ENUM('p') CHARACTER SET latin1,
	  jl LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin CHECK (json_valid(jl)),
	  ca CHAR(2) ASCII, cu CHAR(2) UNICODE, y2 YEAR(2), i1 INT1, i8 INT8, f8 FLOAT8, fx FIXED(5,2), mid MIDDLEINT,
	  cv CHARACTER VARYING(5), ncv NCHAR VARYING(3), et ENUM('a ','b')
	)`)
	want := map[string]Column{
		"ti":    {Type: "tinyint", Nullable: true},
		"tiu":   {Type: "tinyint", Unsigned: true, Nullable: true},
		"si":    {Type: "smallint", Nullable: true},
		"siu":   {Type: "smallint", Unsigned: true, Nullable: true},
		"mi":    {Type: "mediumint", Nullable: true},
		"miu":   {Type: "mediumint", Unsigned: true, Nullable: true},
		"i":     {Type: "int"},
		"iu":    {Type: "int", Unsigned: true, Nullable: true},
		"bi":    {Type: "bigint", Nullable: true},
		"biu":   {Type: "bigint", Unsigned: true, Nullable: true},
		"d":     {Type: "decimal", Precision: 65, Scale: 30, Nullable: true},
		"d0":    {Type: "decimal", Precision: 10, Nullable: true},
		"d5":    {Type: "decimal", Precision: 5, Nullable: true},
		"du":    {Type: "decimal", Unsigned: true, Precision: 10, Scale: 2, Nullable: true},
		"f":     {Type: "float", Nullable: true},
		"f30":   {Type: "double", Nullable: true},
		"db":    {Type: "double", Nullable: true},
		"dp":    {Type: "double", Unsigned: true, Nullable: true},
		"r":     {Type: "double", Nullable: true},
		"b1":    {Type: "bit", Length: 1, Nullable: true},
		"b64":   {Type: "bit", Length: 64, Nullable: true},
		"bo":    {Type: "tinyint", Nullable: true},
		"bn2":   {Type: "tinyint", Nullable: true},
		"dt":    {Type: "date", Nullable: true},
		"dtm":   {Type: "datetime", Nullable: true},
		"dtm6":  {Type: "datetime", FSP: 6, Nullable: true},
		"ts6":   {Type: "timestamp", FSP: 6, Nullable: true},
		"tm6":   {Type: "time", FSP: 6, Nullable: true},
		"y":     {Type: "year", Nullable: true},
		"y4":    {Type: "year", Nullable: true},
		"c":     {Type: "char", Length: 10, Charset: "utf8mb4", Nullable: true},
		"c1":    {Type: "char", Length: 1, Charset: "utf8mb4", Nullable: true},
		"vc":    {Type: "varchar", Length: 255, Charset: "utf8mb4", Nullable: true},
		"bn":    {Type: "binary", Length: 8, Nullable: true},
		"vb":    {Type: "varbinary", Length: 16, Nullable: true},
		"cb":    {Type: "char", Length: 3, Charset: "utf8mb4", Nullable: true},
		"cbyte": {Type: "binary", Length: 2, Nullable: true},
		"tt":    {Type: "tinytext", Charset: "utf8mb4", Nullable: true},
		"tx":    {Type: "text", Charset: "utf8mb4", Nullable: true},
		"mt":    {Type: "mediumtext", Charset: "utf8mb4", Nullable: true},
		"lt":    {Type: "longtext", Charset: "utf8mb4", Nullable: true},
		"lv":    {Type: "mediumtext", Charset: "utf8mb4", Nullable: true},
		"t100":  {Type: "text", Charset: "utf8mb4", Nullable: true},
		"tb":    {Type: "tinyblob", Nullable: true},
		"bl":    {Type: "blob", Nullable: true},
		"mb":    {Type: "mediumblob", Nullable: true},
		"lb":    {Type: "longblob", Nullable: true},
		"b300":  {Type: "blob", Nullable: true},
		"lvb":   {Type: "mediumblob", Nullable: true},
		"e":     {Type: "enum", Elems: []string{"a", "b", "it's", `back\slash`}, Charset: "utf8mb4", Nullable: true},
		"s":     {Type: "set", Elems: []string{"x", "y"}, Charset: "utf8mb4", Nullable: true},
		"j":     {Type: "json", Charset: "utf8mb4", Nullable: true},
		"u":     {Type: "uuid", Nullable: true},
		"i6":    {Type: "inet6", Nullable: true},
		"i4":    {Type: "inet4", Nullable: true},
		"g":     {Type: "geometry", Nullable: true},
		"pt":    {Type: "point", Nullable: true},
		"ls":    {Type: "linestring", Nullable: true},
		"pg":    {Type: "polygon", Nullable: true},
		"mpt":   {Type: "multipoint", Nullable: true},
		"mls":   {Type: "multilinestring", Nullable: true},
		"mpg":   {Type: "multipolygon", Nullable: true},
		"gc":    {Type: "geometrycollection", Nullable: true},
		"nc":    {Type: "char", Length: 4, Charset: "utf8mb3", Nullable: true},
		"nv":    {Type: "varchar", Length: 5, Charset: "utf8mb3", Nullable: true},
		"l1":    {Type: "varchar", Length: 20, Charset: "latin1", Nullable: true},
		"cyr":   {Type: "char", Length: 5, Charset: "cp1251", Nullable: true},
		"co":    {Type: "varchar", Length: 3, Charset: "latin1", Nullable: true},
		"uca":   {Type: "varchar", Length: 7, Charset: "utf8mb4", Nullable: true},
		"u3":    {Type: "varchar", Length: 2, Charset: "utf8mb3", Nullable: true},
		"bin":   {Type: "varbinary", Length: 4, Nullable: true},
		"el":    {Type: "enum", Elems: []string{"p"}, Charset: "latin1", Nullable: true},
		"jl":    {Type: "json", Charset: "utf8mb4", Nullable: true},
		"ca":    {Type: "char", Length: 2, Charset: "latin1", Nullable: true},
		"cu":    {Type: "char", Length: 2, Charset: "ucs2", Nullable: true},
		"y2":    {Type: "year", Nullable: true},
		"i1":    {Type: "tinyint", Nullable: true},
		"i8":    {Type: "bigint", Nullable: true},
		"f8":    {Type: "double", Nullable: true},
		"fx":    {Type: "decimal", Precision: 5, Scale: 2, Nullable: true},
		"mid":   {Type: "mediumint", Nullable: true},
		"cv":    {Type: "varchar", Length: 5, Charset: "utf8mb4", Nullable: true},
		"ncv":   {Type: "varchar", Length: 3, Charset: "utf8mb3", Nullable: true},
		"et":    {Type: "enum", Elems: []string{"a", "b"}, Charset: "utf8mb4", Nullable: true},
	}
	tb := mustGet(t, cat, "ty")
	if len(tb.Columns) != len(want) {
		t.Errorf("%d columns, want %d", len(tb.Columns), len(want))
	}
	for _, c := range tb.Columns {
		w, ok := want[c.Name]
		if !ok {
			t.Errorf("unexpected column %q", c.Name)
			continue
		}
		w.Name = c.Name
		if jsonOf(c) != jsonOf(w) {
			t.Errorf("column %s:\n got %s\nwant %s", c.Name, jsonOf(c), jsonOf(w))
		}
	}
	if tb.KeyKind != KeyRow || len(tb.Key) != len(tb.Columns) {
		t.Errorf("key %s %v, want every column", tb.KeyKind, tb.Key)
	}
}

// TestApplyDDLCharsets checks the charset a character column gets: its own,
// its collation's, the table's, the schema's, the server's, utf8mb4.
func TestApplyDDLCharsets(t *testing.T) {
	cat := NewCatalog()
	cat.SetSchemaCharset("db", "latin1")
	cat.SetSchemaCharset("s2", "utf8")
	cat.SetServerCharset("cp1251")
	mustApply(t, cat,
		"CREATE TABLE a (x VARCHAR(3), y VARCHAR(3) CHARSET ascii, z TEXT COLLATE utf8mb4_nopad_bin)",
		"CREATE TABLE b (x CHAR(2)) DEFAULT CHARSET=utf8mb4",
		"CREATE TABLE c (x CHAR(2)) COLLATE=utf16_general_ci",
		"CREATE TABLE f (x CHAR(2) COLLATE uca1400_as_cs, y CHAR(1) CHARACTER SET latin2 COLLATE uca1400_ai_ci) DEFAULT COLLATE = uca1400_ai_ci",
		"CREATE TABLE s2.d (x CHAR(2))",
		"CREATE TABLE s3.e (x CHAR(2))",
		"ALTER TABLE b ADD COLUMN w VARCHAR(1), MODIFY x CHAR(2) CHARACTER SET latin2",
		"ALTER TABLE a DEFAULT CHARACTER SET = utf8mb4, ADD v VARCHAR(1)",
	)
	check := func(schema, table, col, want string) {
		t.Helper()
		tb, ok := cat.Get(schema, table)
		if !ok {
			t.Fatalf("%s.%s missing", schema, table)
		}
		if got := tb.Columns[tb.ColumnIndex(col)].Charset; got != want {
			t.Errorf("%s.%s.%s charset %q, want %q", schema, table, col, got, want)
		}
	}
	check("db", "a", "x", "latin1")
	check("db", "a", "y", "ascii")
	check("db", "a", "z", "utf8mb4")
	check("db", "a", "v", "utf8mb4")
	check("db", "b", "x", "latin2")
	check("db", "b", "w", "utf8mb4")
	check("db", "c", "x", "utf16")
	check("s2", "d", "x", "utf8mb3")
	check("s3", "e", "x", "cp1251")
	check("db", "f", "x", "latin1")
	check("db", "f", "y", "latin2")
	if tb := mustGet(t, cat, "a"); tb.Charset != "utf8mb4" {
		t.Errorf("table a charset %q, want utf8mb4 after ALTER", tb.Charset)
	}

	mustApply(t, cat, "CREATE TABLE conv (a TINYTEXT, b TEXT, c VARCHAR(10), d INT, e ENUM('x')) CHARSET latin1",
		"ALTER TABLE conv CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_uca1400_ai_ci")
	got := mustGet(t, cat, "conv")
	wantTypes := []string{"text", "mediumtext", "varchar", "int", "enum"}
	for i, c := range got.Columns {
		if c.Type != wantTypes[i] || (isCharType(c.Type) && c.Charset != "utf8mb4") || (!isCharType(c.Type) && c.Charset != "") {
			t.Errorf("after CONVERT TO: column %s %s %q", c.Name, c.Type, c.Charset)
		}
	}
}
