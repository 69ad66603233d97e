package dumpfile

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll parses input completely, through three kinds of source so that
// every buffer boundary is exercised.
func readAll(t *testing.T, input string) []Row {
	t.Helper()
	var first []Row
	for _, src := range []struct {
		name string
		r    func() io.Reader
	}{
		{"whole", func() io.Reader { return strings.NewReader(input) }},
		{"one-byte", func() io.Reader { return iotest.OneByteReader(strings.NewReader(input)) }},
		{"data-err", func() io.Reader { return iotest.DataErrReader(iotest.HalfReader(strings.NewReader(input))) }},
	} {
		rows, err := collect(NewReader(src.r(), "t.sql"))
		if err != nil {
			t.Fatalf("%s: %v", src.name, err)
		}
		if first == nil {
			first = rows
		} else if !rowsEqual(first, rows) {
			t.Fatalf("%s: rows differ from a whole read:\n%v\n%v", src.name, rows, first)
		}
	}
	return first
}

func collect(r *Reader) ([]Row, error) {
	rows := []Row{}
	for {
		row, err := r.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, row.Clone())
	}
}

func rowsEqual(a, b []Row) bool {
	return slices.EqualFunc(a, b, func(x, y Row) bool {
		return x.Line == y.Line && slices.Equal(x.Columns, y.Columns) &&
			slices.EqualFunc(x.Values, y.Values, func(v, w Value) bool {
				return v.Null == w.Null && v.Kind == w.Kind && v.Charset == w.Charset && bytes.Equal(v.Raw, w.Raw)
			})
	})
}

// S, N, Num, H and B build expected values.
func S(s string) Value   { return Value{Kind: KindString, Raw: []byte(s)} }
func Num(s string) Value { return Value{Kind: KindNumber, Raw: []byte(s)} }
func H(s string) Value   { return Value{Kind: KindHex, Raw: []byte(s)} }
func B(s string) Value   { return Value{Kind: KindBit, Raw: []byte(s)} }

var N = Value{Kind: KindNull, Null: true}

func wantRows(t *testing.T, got []Row, want ...[]Value) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		w := Row{Values: want[i], Columns: got[i].Columns, Line: got[i].Line}
		if !rowsEqual([]Row{got[i]}, []Row{w}) {
			t.Errorf("row %d:\n got %v\nwant %v", i, got[i].Values, want[i])
		}
	}
}

// v010File is the shape mydumper 0.10.0 writes (copied from a real dump).
const v010File = "/*!40101 SET NAMES binary*/;\n" +
	"/*!40014 SET FOREIGN_KEY_CHECKS=0*/;\n" +
	"/*!40103 SET TIME_ZONE='+00:00' */;\n" +
	"INSERT INTO `t` VALUES\n" +
	"(1,\"\\0\x01\x02\x03\xff\\\\\\'\\\"\\n\\r\\Z\",\"it\\'s \\\"q\\\" \\\\ \\n line2 ),( ;\",18446744073709551615,-12345678901234567890.0123456789,\"0000-00-00 00:00:00.000000\",\"\x02\xaa\"),\n" +
	"(2,NULL,NULL,NULL,NULL,NULL,NULL),\n" +
	"(3,\"\",\"\xf0\x9f\x98\x80\xc3\xa9\",0,0.1,\"2020-01-02 03:04:05.123\",\"\x01\");\n"

func TestReaderMydumper010(t *testing.T) {
	rows := readAll(t, v010File)
	wantRows(t, rows,
		[]Value{Num("1"), S("\x00\x01\x02\x03\xff\\'\"\n\r\x1a"), S("it's \"q\" \\ \n line2 ),( ;"),
			Num("18446744073709551615"), Num("-12345678901234567890.0123456789"), S("0000-00-00 00:00:00.000000"), S("\x02\xaa")},
		[]Value{Num("2"), N, N, N, N, N, N},
		[]Value{Num("3"), S(""), S("😀é"), Num("0"), Num("0.1"), S("2020-01-02 03:04:05.123"), S("\x01")},
	)
	for i, line := range []int{5, 6, 7} {
		if rows[i].Line != line {
			t.Errorf("row %d on line %d, want %d", i, rows[i].Line, line)
		}
		if rows[i].Columns != nil {
			t.Errorf("row %d has columns %q", i, rows[i].Columns)
		}
	}
}

func TestReaderNewerShape(t *testing.T) {
	// mydumper >= 0.12: "VALUES(r1)\n,(r2)", single quotes, a column list.
	in := "/*!40101 SET NAMES binary*/;\n/*!40014 SET FOREIGN_KEY_CHECKS=0*/;\n/*!40103 SET TIME_ZONE='+00:00' */;" +
		"INSERT INTO `t` (`id`,`name`) VALUES(1,'a')\n,(2,'b''c')\n,(3,'d\\'e');\n" +
		"INSERT INTO `t` (`id`,`name`) VALUES(4,'x');\n"
	r := NewReader(strings.NewReader(in), "t.00000.sql")
	rows, err := collect(r)
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, rows,
		[]Value{Num("1"), S("a")}, []Value{Num("2"), S("b'c")}, []Value{Num("3"), S("d'e")}, []Value{Num("4"), S("x")})
	for i, line := range []int{3, 4, 5, 6} {
		if rows[i].Line != line || !slices.Equal(rows[i].Columns, []string{"id", "name"}) {
			t.Errorf("row %d: line %d columns %q", i, rows[i].Line, rows[i].Columns)
		}
	}
	if got := r.Insert(); got.Verb != "INSERT" || got.Table != "t" || got.Line != 6 {
		t.Errorf("Insert() = %+v", got)
	}
	if r.Names() != "binary" || r.TimeZone() != "+00:00" {
		t.Errorf("Names() = %q, TimeZone() = %q", r.Names(), r.TimeZone())
	}
	r = NewReader(strings.NewReader("SET NAMES 'utf8mb4'; SET time_zone = \"SYSTEM\", sql_mode='';"), "x.sql")
	if _, err := r.Next(); err != io.EOF || r.Names() != "utf8mb4" || r.TimeZone() != "SYSTEM" {
		t.Errorf("err %v, Names() = %q, TimeZone() = %q", err, r.Names(), r.TimeZone())
	}
}

func TestReaderLayouts(t *testing.T) {
	want := [][]Value{{Num("1"), S("a")}, {Num("2"), S("b")}}
	for _, in := range []string{
		"INSERT INTO t VALUES (1,'a'),(2,'b');",
		"INSERT INTO t VALUES\n(1,'a'),\n(2,'b');\n",
		"INSERT INTO t VALUES(1,'a')\n,(2,'b')\n;",
		"insert into t values ( 1 , 'a' ) , ( 2 , 'b' ) ;",
		"INSERT\nINTO\n`t`\nVALUES\n(\n1\n,\n'a'\n)\n,\n(\n2\n,\n'b'\n)\n;\n",
		"INSERT INTO t VALUE (1,'a'),(2,'b');",
		"-- a comment\n# another\n/* block\n comment */INSERT /* c */ INTO t VALUES (1 /* one */,'a') -- x\n, (2,'b')#y\n;-- end",
		"SET FOREIGN_KEY_CHECKS=0;\nSET @a = 'x;y';\nSET sql_mode=\"\";;\nINSERT INTO `db`.`t` VALUES (1,'a'),(2,'b');",
		"INSERT INTO t VALUES (1,'a');\n\n\nINSERT INTO t VALUES (2,'b');",
		"INSERT INTO t VALUES (1,'a');INSERT INTO t VALUES (2,'b');",
		"/*!40101 SET NAMES utf8mb4 */;/*M!100100 SET @x=1*/;INSERT INTO t VALUES (1,'a'),(2,'b');",
	} {
		t.Run("", func(t *testing.T) { wantRows(t, readAll(t, in), want...) })
	}
}

func TestReaderVerbs(t *testing.T) {
	for in, want := range map[string]Insert{
		"INSERT INTO `t` VALUES (1);":                         {Verb: "INSERT", Table: "t"},
		"INSERT IGNORE INTO `t` VALUES (1);":                  {Verb: "INSERT IGNORE", Table: "t"},
		"insert low_priority ignore into `d`.`t` VALUES (1);": {Verb: "INSERT IGNORE", Schema: "d", Table: "t"},
		"REPLACE INTO t VALUES (1);":                          {Verb: "REPLACE", Table: "t"},
		"REPLACE `we``ird` VALUES (1);":                       {Verb: "REPLACE", Table: "we`ird"},
		"INSERT INTO tbl$1 (a, `b c`) VALUES (1,2);":          {Verb: "INSERT", Table: "tbl$1", Columns: []string{"a", "b c"}},
	} {
		r := NewReader(strings.NewReader(in), "x.sql")
		if _, err := r.Next(); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got := r.Insert()
		got.Line = 0
		if got.Verb != want.Verb || got.Schema != want.Schema || got.Table != want.Table || !slices.Equal(got.Columns, want.Columns) {
			t.Errorf("%s: got %+v, want %+v", in, got, want)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Errorf("%s: second Next = %v", in, err)
		}
	}
}

func TestReaderStrings(t *testing.T) {
	rows := readAll(t, `INSERT INTO t VALUES ('\0\'\"\b\n\r\t\Z\\\%\_\q\é', "a""b", 'a''b', 'x' "y"  'z', '', "", 'multi
line', _binary 'bin', _utf8mb4'u', _BINARY"B", _latin1 X'E9', _binary 0x00ff, _binary b'1');`)
	want := []Value{S("\x00'\"\b\n\r\t\x1a\\\\%\\_qé"), S(`a"b`), S("a'b"), S("xyz"), S(""), S(""), S("multi\nline"),
		{Kind: KindString, Raw: []byte("bin"), Charset: "binary"}, {Kind: KindString, Raw: []byte("u"), Charset: "utf8mb4"},
		{Kind: KindString, Raw: []byte("B"), Charset: "binary"}, {Kind: KindHex, Raw: []byte{0xe9}, Charset: "latin1"},
		{Kind: KindHex, Raw: []byte{0, 0xff}, Charset: "binary"}, {Kind: KindBit, Raw: []byte{1}, Charset: "binary"}}
	wantRows(t, rows, want)
}

func TestReaderAllBytes(t *testing.T) {
	// Every byte value inside both quote styles: raw except the quote and
	// the backslash, which are escaped.
	var all []byte
	for i := range 256 {
		all = append(all, byte(i))
	}
	for _, q := range []byte{'\'', '"'} {
		var b bytes.Buffer
		b.WriteString("INSERT INTO t VALUES (")
		b.WriteByte(q)
		for _, c := range all {
			if c == q || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		}
		b.WriteByte(q)
		b.WriteString(");\n")
		rows := readAll(t, b.String())
		wantRows(t, rows, []Value{{Kind: KindString, Raw: all}})
		if rows[0].Line != 1 {
			t.Errorf("line %d", rows[0].Line)
		}
	}
}

func TestReaderLiterals(t *testing.T) {
	rows := readAll(t, "INSERT INTO t VALUES (0xABCD, 0xabc, X'ABcd', x'', b'0101', 0b0101, B'111111111', b'', 0x0, "+
		"NULL, null, -1, +1, 1.5, .5, 1., -1.5e-10, 1E+5, 18446744073709551615, -9223372036854775808, 0, 00012);")
	wantRows(t, rows, []Value{H("\xab\xcd"), H("\x0a\xbc"), H("\xab\xcd"), H(""), B("\x05"), B("\x05"), B("\x01\xff"), B(""), H("\x00"),
		N, N, Num("-1"), Num("+1"), Num("1.5"), Num(".5"), Num("1."), Num("-1.5e-10"), Num("1E+5"),
		Num("18446744073709551615"), Num("-9223372036854775808"), Num("0"), Num("00012")})
}

func TestReaderEmpty(t *testing.T) {
	for _, in := range []string{"", "\n\n", "-- only a comment", "/*!40101 SET NAMES binary*/;\n/*!40014 SET FOREIGN_KEY_CHECKS=0*/;\n", ";;"} {
		if rows := readAll(t, in); len(rows) != 0 {
			t.Errorf("%q: %d rows", in, len(rows))
		}
	}
}

func TestReaderValuesReused(t *testing.T) {
	r := NewReader(strings.NewReader("INSERT INTO t VALUES ('aaaa'),('bbbb');"), "t.sql")
	first, _ := r.Next()
	kept := first.Clone()
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if string(kept.Values[0].Raw) != "aaaa" {
		t.Errorf("clone changed: %q", kept.Values[0].Raw)
	}
}

func TestReaderReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	r := NewReader(io.MultiReader(strings.NewReader("INSERT INTO t VALUES (1,'ab"), iotest.ErrReader(boom)), "t.sql")
	_, err := r.Next()
	var se *SyntaxError
	if !errors.Is(err, boom) || errors.As(err, &se) || !strings.Contains(err.Error(), "t.sql") {
		t.Fatalf("err = %v, want the read error naming the file", err)
	}
	if _, err2 := r.Next(); err2 != err {
		t.Errorf("error not sticky: %v", err2)
	}
}
