package sqlexport

import (
	"testing"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

func TestAppendLiteral(t *testing.T) {
	for _, tc := range []struct {
		k    literalKind
		in   []byte
		want string
	}{
		{litInteger, nil, "NULL"},
		{litInteger, []byte("18446744073709551615"), "18446744073709551615"},
		{litInteger, []byte("-9223372036854775808"), "-9223372036854775808"},
		{litFloat, []byte("-0"), "-0e0"},
		{litFloat, []byte("0.1"), "0.1e0"},
		{litFloat, []byte("3.4028234663852886e+38"), "3.4028234663852886e+38"},
		{litFloat, []byte("5e-324"), "5e-324"},
		{litString, []byte(""), "''"},
		{litString, []byte("a'b\\c\x00d\ne\rf\x1ag\"h\t😀"), `'a\'b\\c\0d\ne\rf\Zg\"h` + "\t😀'"},
		{litHex, []byte{}, "''"},
		{litHex, nil, "NULL"},
		{litHex, []byte{0, 0xff, 0x1a}, "0x00ff1a"},
	} {
		got, err := appendLiteral(nil, tc.k, rowimage.RawCell(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("appendLiteral(%d, %q) = %s, %v; want %s", tc.k, tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "1;DROP TABLE t", "1 ", "0x10", "1e5"} {
		if got, err := appendLiteral(nil, litInteger, rowimage.TextCell([]byte(bad))); err == nil {
			t.Errorf("integer %q accepted as %s", bad, got)
		}
	}
	if got, err := appendLiteral(nil, litFloat, rowimage.TextCell([]byte("1e5)"))); err == nil {
		t.Errorf("float accepted as %s", got)
	}
}

func TestLiteralKinds(t *testing.T) {
	for _, tc := range []struct {
		c    schema.Column
		want literalKind
	}{
		{schema.Column{Type: "bigint", Unsigned: true}, litInteger},
		{schema.Column{Type: "year"}, litInteger},
		{schema.Column{Type: "float"}, litFloat},
		{schema.Column{Type: "decimal", Precision: 65, Scale: 30}, litString},
		{schema.Column{Type: "datetime"}, litString},
		{schema.Column{Type: "json"}, litString},
		{schema.Column{Type: "inet6"}, litString},
		{schema.Column{Type: "varchar", Charset: "latin1"}, litString},
		{schema.Column{Type: "varchar", Charset: "binary"}, litHex},
		{schema.Column{Type: "bit", Length: 64}, litHex},
		{schema.Column{Type: "geometry"}, litHex},
	} {
		if got, err := literalKindOf(&tc.c); err != nil || got != tc.want {
			t.Errorf("%+v: %d, %v; want %d", tc.c, got, err, tc.want)
		}
	}
	if _, err := literalKindOf(&schema.Column{Name: "x", Type: "vector3d"}); err == nil {
		t.Error("unsupported type accepted")
	}
}

func TestQuoteIdent(t *testing.T) {
	if got := quoteIdent("a`b c"); got != "`a``b c`" {
		t.Fatal(got)
	}
}

func TestCommentIsOneLine(t *testing.T) {
	if got := comment("db.t\nDROP DATABASE x;\r\x00"); got != "db.t?DROP DATABASE x;??" {
		t.Fatal(got)
	}
}
