package snapshot

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// allTypes is a table with every MariaDB/MySQL column type dbtrail maps.
func allTypes() *schema.Table {
	u := func(c schema.Column) schema.Column { c.Unsigned = true; return c }
	col := func(name, typ string) schema.Column { return schema.Column{Name: name, Type: typ, Nullable: true} }
	txt := func(name, typ, cs string, n int) schema.Column {
		c := col(name, typ)
		c.Charset, c.Length = cs, n
		return c
	}
	withLen := func(c schema.Column, n int) schema.Column { c.Length = n; return c }
	withFSP := func(c schema.Column, n int) schema.Column { c.FSP = n; return c }
	dec := col("dec65", "decimal")
	dec.Precision, dec.Scale = 65, 30
	dec0 := col("dec10", "decimal")
	dec0.Precision = 10
	en := col("en", "enum")
	en.Elems = []string{"a", "b", "ç"}
	st := col("st", "set")
	st.Elems = []string{"x", "y", "z"}
	cols := []schema.Column{
		{Name: "id", Type: "int"},
		col("ti", "tinyint"), u(col("tiu", "tinyint")),
		col("si", "smallint"), u(col("siu", "smallint")),
		col("mi", "mediumint"), u(col("miu", "mediumint")),
		col("i", "int"), u(col("iu", "int")),
		col("bi", "bigint"), u(col("biu", "bigint")),
		col("y", "year"), dec, dec0,
		col("f", "float"), col("db", "double"),
		col("dt", "date"), withFSP(col("dtm", "datetime"), 6), col("ts", "timestamp"),
		withFSP(col("tm", "time"), 6), col("tm0", "time"),
		txt("c", "char", "utf8mb4", 10), txt("vc", "varchar", "utf8mb4", 100),
		txt("tx", "text", "utf8mb4", 0), txt("l1", "varchar", "latin1", 10),
		en, st, col("js", "json"),
		withLen(col("bn", "binary"), 8), withLen(col("vb", "varbinary"), 16), col("bl", "blob"),
		withLen(col("bt", "bit"), 64), withLen(col("bt5", "bit"), 5), col("g", "geometry"),
		txt("cb", "char", "binary", 4),
		col("uu", "uuid"), col("i6", "inet6"), col("i4", "inet4"),
	}
	return &schema.Table{Schema: "db1", Name: "all_types", Columns: cols, Key: []string{"id"}, KeyKind: schema.KeyPrimary}
}

// allTypesRows returns rows in SQL text form. Values are given as MySQL's
// SELECT prints them (already canonical), except BINARY(8) "ab" which is
// padded on the way in; padded records what reading back gives for it.
func allTypesRows() (rows [][][]byte, padded []byte) {
	b := func(s string) []byte { return []byte(s) }
	dmax := "99999999999999999999999999999999999.999999999999999999999999999999"
	ones := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	rows = [][][]byte{
		{b("1"), b("-128"), b("0"), b("-32768"), b("0"), b("-8388608"), b("0"),
			b("-2147483648"), b("0"), b("-9223372036854775808"), b("0"),
			b("0"), b("-" + dmax), b("-9999999999"),
			b("-3.4028234663852886e+38"), b("-1.7976931348623157e+308"),
			b("0000-00-00"), b("0000-00-00 00:00:00.000000"), b("0000-00-00 00:00:00"),
			b("-838:59:59.000000"), b("-00:00:01"),
			b(""), b(""), b(""), b(""), b(""), b(""), b(""),
			b(""), b(""), b(""), []byte{0, 0, 0, 0, 0, 0, 0, 0}, []byte{0}, b(""), []byte{0, 0, 0, 0},
			b("00000000-0000-0000-0000-000000000000"), b("::"), b("0.0.0.0")},
		{b("2"), b("127"), b("255"), b("32767"), b("65535"), b("8388607"), b("16777215"),
			b("2147483647"), b("4294967295"), b("9223372036854775807"), b("18446744073709551615"),
			b("2155"), b(dmax), b("9999999999"),
			b("3.4028234663852886e+38"), b("1.7976931348623157e+308"),
			b("9999-12-31"), b("9999-12-31 23:59:59.999999"), b("2038-01-19 03:14:07"),
			b("838:59:59.999999"), b("838:59:59"),
			b("😀𝄞"), b("4-byte 😀 𝄞 🀄 and é"), b("\"quoted\" \\ back\nslash\t\x01"), b("é€ÿ"),
			b("ç"), b("x,y,z"), b(`{"a": [1, 2], "s": "x\"y"}`),
			b("ab"), []byte{0, 1, 2, 0}, []byte{0xff, 0, 0xfe}, ones, []byte{0x1f},
			[]byte{1, 2, 3, 0xff}, []byte("a\x00\x00\x00"),
			b("123e4567-e89b-12d3-a456-426614174000"), b("2001:db8::ff00:42:8329"), b("255.255.255.255")},
		make([][]byte, 38), // all NULL (id too: the writer does not enforce NOT NULL)
		{b("4"), b("0"), b("1"), b("-1"), b("1"), b("0"), b("1"),
			b("0"), b("1"), b("-1"), b("1"),
			b("1901"), b("0.000000000000000000000000000001"), b("0"),
			b("1.401298464324817e-45"), b("5e-324"),
			b("2026-11-29"), b("2026-11-29 06:15:00.000001"), b("1970-01-01 00:00:01"),
			b("00:00:00.000000"), b("-00:00:00"),
			b("abc"), b("null"), b("x"), b("a"), b("a"), b(""), b("null"),
			b("\x00\x00\x00\x00\x00\x00\x00\x00"), b(""), b("\x00"), []byte{0x80, 0, 0, 0, 0, 0, 0, 0}, []byte{0},
			b(""), b(""),
			b("ffffffff-ffff-ffff-ffff-ffffffffffff"), b("::ffff:1.2.3.4"), b("10.0.0.1")},
		{b("5"), b("-1"), b("128"), b("-0"), b("1000"), b("-1"), b("1"),
			b("1"), b("2"), b("3"), b("9223372036854775808"),
			b("2026"), b("-0.5"), b("-1"),
			b("-0"), b("-0"),
			b("2026-02-00"), b("2026-00-00 00:00:00.500000"), b("2026-11-29 06:15:00"),
			b("-12:34:56.789000"), b("100:00:00"),
			b("x y"), b(" trailing "), b("\u2028\u2029"), b("ÿ"), b("b"), b("y"), b("[]"),
			b("\x00\x00\x00\x00\x00\x00\x00a"), b("v"), b("b"), []byte{1}, []byte{0x10},
			b("g"), b("\x00\x00\x00\x01"),
			b("00000000-0000-0000-0000-000000000001"), b("::1"), b("127.0.0.1")},
	}
	return rows, append([]byte("ab"), 0, 0, 0, 0, 0, 0)
}

// writeFile writes rows with AppendSQL into dir/name and returns the path.
func writeFile(t testing.TB, dir, name string, tbl *schema.Table, rows [][][]byte, opts WriterOptions) (string, WriteResult) {
	t.Helper()
	var buf bytes.Buffer
	tw, err := NewTableWriter(&buf, tbl, testMeta(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := tw.AppendSQL(rowimage.RawCells(nil, r)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := tw.Close()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := writeBytes(p, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	return p, res
}

func testMeta() FooterMeta {
	return FooterMeta{
		CreateTable: "CREATE TABLE `all_types` (`id` int NOT NULL, PRIMARY KEY (`id`))",
		Position:    binlogpos.Position{File: "mysql-bin.000042", Pos: 1234, GTID: "0-1-99", Seq: 77},
		SnapshotID:  "20261129T061500Z",
		Source:      "src1",
	}
}
