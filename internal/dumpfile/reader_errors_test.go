package dumpfile

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReaderErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		rows     int    // rows returned before the error
		line     int    // line of the error
		msg      string // part of the message
	}{
		{"cut mid-string", "INSERT INTO t VALUES\n(1,'ab\nc", 0, 2, "unterminated string"},
		{"cut mid-string double", "INSERT INTO t VALUES (1,\"ab", 0, 1, "unterminated string"},
		{"cut mid-row", "INSERT INTO t VALUES\n(1,'a'),\n(2,", 1, 3, "end of file inside a row"},
		{"cut mid-row after value", "INSERT INTO t VALUES (1,'a'", 0, 1, "end of file inside a row"},
		{"cut after comma", "INSERT INTO t VALUES (1,'a'),\n", 1, 2, "row was expected"},
		{"cut before semicolon", "INSERT INTO t VALUES (1,'a'),(2,'b')\n", 2, 2, "missing ';'"},
		{"cut in header", "INSERT INTO `t", 0, 1, "quoted` name"},
		{"cut after VALUES", "INSERT INTO t VALUES", 0, 1, "row was expected"},
		{"cut in number", "INSERT INTO t VALUES (1,-", 0, 1, "malformed number"},
		{"bad escape at EOF", "INSERT INTO t VALUES (1,'abc\\", 0, 1, "after a backslash"},
		{"cut in SET", "/*!40101 SET NAMES binary", 0, 1, "SET statement"},
		{"cut in versioned comment", "/*!40101 SET NAMES binary;", 0, 1, "inside a /*! comment"},
		{"unterminated comment", "INSERT INTO t VALUES (1);\n/* never closed\n", 1, 2, "unterminated /* comment"},
		{"unexpected word", "INSERT INTO t VALUES (1,foo);", 0, 1, `"foo"`},
		{"function call", "INSERT INTO t VALUES (1,NOW());", 0, 1, `"NOW"`},
		{"expression", "INSERT INTO t VALUES (1+2);", 0, 1, "unexpected '+' in a row"},
		{"missing comma", "INSERT INTO t VALUES (1 2);", 0, 1, "want ',' or ')'"},
		{"junk after string", "INSERT INTO t VALUES ('a'x);", 0, 1, "want ',' or ')'"},
		{"junk after row", "INSERT INTO t VALUES (1) (2);", 1, 1, "after a row"},
		{"empty row", "INSERT INTO t VALUES ();", 0, 1, "unexpected ')'"},
		{"fewer values than first row", "INSERT INTO t VALUES\n(1,2),\n(3);", 1, 3, "row has 1 values, the first row of the statement has 2"},
		{"more values than first row", "INSERT INTO t VALUES (1),\n(2,3);", 1, 2, "row has 2 values, the first row of the statement has 1"},
		{"column list mismatch", "INSERT INTO t (`a`,`b`) VALUES\n(1);", 0, 2, "the column list has 2"},
		{"CREATE in data file", "/*!40101 SET NAMES binary*/;\nCREATE TABLE t (a int);", 0, 2, "unexpected CREATE statement"},
		{"DELETE in data file", "INSERT INTO t VALUES (1);\ndelete from t;", 1, 2, "unexpected DELETE statement"},
		{"INSERT SELECT", "INSERT INTO t SELECT 1;", 0, 1, "INSERT ... SELECT"},
		{"INSERT SET", "INSERT INTO t SET a=1;", 0, 1, "INSERT ... SET"},
		{"garbage", "\x00\x01", 0, 1, "start of a statement"},
		{"number then letters", "INSERT INTO t VALUES (12ab);", 0, 1, `malformed number "12ab"`},
		{"two points", "INSERT INTO t VALUES (1.2.3);", 0, 1, "malformed number"},
		{"bare exponent", "INSERT INTO t VALUES (1e);", 0, 1, "malformed number"},
		{"bad hex", "INSERT INTO t VALUES (0xZZ);", 0, 1, "malformed 0x"},
		{"odd X''", "INSERT INTO t VALUES (X'ABC');", 0, 1, "odd number"},
		{"bad bit digit", "INSERT INTO t VALUES (b'012');", 0, 1, "bad digit"},
		{"cut in X''", "INSERT INTO t VALUES (X'AB", 0, 1, "quoted hex or bit"},
		{"introducer without literal", "INSERT INTO t VALUES (_binary 12);", 0, 1, "after the charset introducer _binary"},
		{"multibyte-unsafe names", "SET NAMES sjis;", 0, 1, "SET NAMES sjis is not supported"},
		{"nested versioned", "/*!40101 /*!40101 SET a=1*/;", 0, 1, "nested"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, src := range []io.Reader{strings.NewReader(tc.in), iotest.OneByteReader(strings.NewReader(tc.in))} {
				rows, err := collect(NewReader(src, "orders.00001.sql"))
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("err = %v, want a *SyntaxError", err)
				}
				if len(rows) != tc.rows || se.Line != tc.line || se.File != "orders.00001.sql" || !strings.Contains(se.Msg, tc.msg) {
					t.Fatalf("after %d rows: %v; want %d rows and line %d containing %q", len(rows), err, tc.rows, tc.line, tc.msg)
				}
				want := "orders.00001.sql:" + itoa(tc.line) + ": "
				if !strings.HasPrefix(err.Error(), want) {
					t.Errorf("message %q does not start with %q", err.Error(), want)
				}
			}
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
