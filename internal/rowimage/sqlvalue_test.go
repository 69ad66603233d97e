package rowimage

import (
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/schema"
)

type sqlCase struct {
	name    string
	col     schema.Column
	raw     []byte
	want    string
	wantErr string
}

func TestAppendSQLValue(t *testing.T) {
	b := func(s string) []byte { return []byte(s) }
	cases := []sqlCase{
		{"null", intCol("int", false), nil, "null", ""},
		{"empty string is not null", schema.Column{Type: "varchar", Charset: "utf8mb4"}, []byte{}, `""`, ""},
		{"tinyint min", intCol("tinyint", false), b("-128"), "-128", ""},
		{"tinyint unsigned max", intCol("tinyint", true), b("255"), "255", ""},
		{"tinyint unsigned over", intCol("tinyint", true), b("256"), "", "out of range"},
		{"zerofill", intCol("int", true), b("00042"), "42", ""},
		{"bigint min", intCol("bigint", false), b("-9223372036854775808"), "-9223372036854775808", ""},
		{"bigint under", intCol("bigint", false), b("-9223372036854775809"), "", "out of range"},
		{"bigint unsigned max", intCol("bigint", true), b("18446744073709551615"), "18446744073709551615", ""},
		{"bigint unsigned overflow", intCol("bigint", true), b("18446744073709551616"), "", "overflows 64 bits"},
		{"unsigned negative", intCol("int", true), b("-1"), "", "negative value"},
		{"int garbage", intCol("int", false), b("12a"), "", "malformed value"},
		{"int empty", intCol("int", false), b(""), "", "malformed value"},
		{"int minus only", intCol("int", false), b("-"), "", "malformed value"},
		{"negative zero int", intCol("int", false), b("-0"), "0", ""},
		{"year", schema.Column{Type: "year"}, b("2026"), "2026", ""},
		{"year zero", schema.Column{Type: "year"}, b("0000"), "0", ""},
		{"year bad", schema.Column{Type: "year"}, b("20x6"), "", "malformed year"},
		{"float via double text", schema.Column{Type: "float"}, b("0.10000000149011612"), "0.1", ""},
		{"float max via double", schema.Column{Type: "float"}, b("3.4028234663852886e38"), "3.4028235e+38", ""},
		{"float short print", schema.Column{Type: "float"}, b("3.14159"), "3.14159", ""},
		{"float out of range", schema.Column{Type: "float"}, b("1e39"), "", "out of FLOAT range"},
		{"float negative zero", schema.Column{Type: "float"}, b("-0"), "-0", ""},
		{"double", schema.Column{Type: "double"}, b("0.1"), "0.1", ""},
		{"double max", schema.Column{Type: "double"}, b("1.7976931348623157e308"), "1.7976931348623157e+308", ""},
		{"double exp form", schema.Column{Type: "double"}, b("1e21"), "1e+21", ""},
		{"double nan", schema.Column{Type: "double"}, b("nan"), "", "malformed float"},
		{"double inf", schema.Column{Type: "double"}, b("inf"), "", "malformed float"},
		{"double overflow", schema.Column{Type: "double"}, b("1e309"), "", "malformed float"},
		{"double hex", schema.Column{Type: "double"}, b("0x1p-2"), "", "malformed float"},
		{"decimal", schema.Column{Type: "decimal", Precision: 10, Scale: 4}, b("-12.3400"), `"-12.3400"`, ""},
		{"datetime", schema.Column{Type: "datetime", FSP: 3}, b("2026-11-29 08:00:00.123"), `"2026-11-29 08:00:00.123"`, ""},
		{"time", schema.Column{Type: "time", FSP: 6}, b("-838:59:59.000000"), `"-838:59:59.000000"`, ""},
		{"latin1 arrives as utf8", schema.Column{Type: "varchar", Charset: "latin1"}, b("é€"), `"é€"`, ""},
		{"latin1 column invalid utf8", schema.Column{Type: "varchar", Charset: "latin1"}, []byte{0xe9}, "", "invalid UTF-8"},
		{"enum label", schema.Column{Type: "enum", Elems: []string{"a", "b"}}, b("b"), `"b"`, ""},
		{"set labels", schema.Column{Type: "set", Elems: []string{"a", "b", "c"}}, b("a,c"), `"a,c"`, ""},
		{"json text kept", schema.Column{Type: "json"}, b(`{"a": [1, 2], "b":"x, y"}`), `"{\"a\": [1, 2], \"b\":\"x, y\"}"`, ""},
		{"json empty", schema.Column{Type: "json"}, b(""), `"null"`, ""},
		{"bit raw", schema.Column{Type: "bit", Length: 10}, []byte{0x03, 0xff}, b64s([]byte{3, 0xff}), ""},
		{"bit(64) raw", schema.Column{Type: "bit", Length: 64}, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, `"//////////8="`, ""},
		{"binary padded", schema.Column{Type: "binary", Length: 4}, []byte{'a', 0, 0, 0}, b64s([]byte{'a', 0, 0, 0}), ""},
		{"uuid upper", schema.Column{Type: "uuid"}, b("123E4567-E89B-12D3-A456-426614174000"), `"123e4567-e89b-12d3-a456-426614174000"`, ""},
		{"uuid no hyphens", schema.Column{Type: "uuid"}, b("123e4567e89b12d3a456426614174000"), "", "malformed uuid"},
		{"uuid bad hex", schema.Column{Type: "uuid"}, b("123e4567-e89b-12d3-a456-42661417400g"), "", "malformed uuid"},
		{"inet6 mapped", schema.Column{Type: "inet6"}, b("::ffff:1.2.3.4"), `"::ffff:1.2.3.4"`, ""},
		{"inet6 long form", schema.Column{Type: "inet6"}, b("2001:0DB8:0000::1"), `"2001:db8::1"`, ""},
		{"inet6 compat", schema.Column{Type: "inet6"}, b("::1.2.3.4"), `"::1.2.3.4"`, ""},
		{"inet6 plain v4", schema.Column{Type: "inet6"}, b("1.2.3.4"), "", "malformed inet6"},
		{"inet6 zone", schema.Column{Type: "inet6"}, b("fe80::1%eth0"), "", "malformed inet6"},
		{"inet4", schema.Column{Type: "inet4"}, b("192.168.0.1"), `"192.168.0.1"`, ""},
		{"inet4 v6", schema.Column{Type: "inet4"}, b("::1"), "", "malformed inet4"},
		{"unsupported", schema.Column{Type: "widget"}, b("x"), "", "unsupported column type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.col.Name = "c"
			got, err := AppendSQLValue([]byte("PRE"), &tc.col, RawCell(tc.raw))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "column c ("+tc.col.Type+")") {
					t.Fatalf("got %s, %v; want error containing %q", got, err, tc.wantErr)
				}
				if string(got) != "PRE" {
					t.Fatalf("dst changed on error: %q", got)
				}
				return
			}
			if err != nil || string(got) != "PRE"+tc.want {
				t.Fatalf("got %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

// TestBinlogAndSQLAgree pairs the value go-mysql decodes from the binlog with
// the text SELECT returns for the same stored value: both must encode to the
// same bytes.
func TestBinlogAndSQLAgree(t *testing.T) {
	many := make([]string, 64)
	for i := range many {
		many[i] = "m" + string(rune('a'+i%26))
	}
	pairs := []struct {
		col    schema.Column
		binlog any
		sql    string
	}{
		{intCol("tinyint", true), int8(-1), "255"},
		{intCol("mediumint", true), int32(-1), "16777215"},
		{intCol("bigint", true), uint64(18446744073709551615), "18446744073709551615"},
		{intCol("bigint", false), int64(-9223372036854775808), "-9223372036854775808"},
		{schema.Column{Type: "year"}, int(0), "0000"},
		{schema.Column{Type: "year"}, int(2155), "2155"},
		{schema.Column{Type: "decimal", Precision: 10, Scale: 4}, "-12.3400", "-12.3400"},
		{schema.Column{Type: "decimal", Precision: 10, Scale: 0}, "0", "0"},
		{schema.Column{Type: "float"}, float32(0.1), "0.10000000149011612"},
		{schema.Column{Type: "float"}, float32(-3.4028235e38), "-3.4028234663852886e38"},
		{schema.Column{Type: "double"}, 0.1, "0.1"},
		{schema.Column{Type: "double"}, -2.2250738585072014e-308, "-2.2250738585072014e-308"},
		{schema.Column{Type: "date"}, "0000-00-00", "0000-00-00"},
		{schema.Column{Type: "datetime", FSP: 6}, "2026-11-29 08:00:00.000000", "2026-11-29 08:00:00.000000"},
		{schema.Column{Type: "timestamp", FSP: 3}, "0000-00-00 00:00:00.000", "0000-00-00 00:00:00.000"},
		{schema.Column{Type: "time", FSP: 6}, "12:00:00", "12:00:00.000000"}, // go-mysql omits a zero fraction
		{schema.Column{Type: "time", FSP: 0}, "-838:59:59", "-838:59:59"},
		{schema.Column{Type: "varchar", Charset: "utf8mb4"}, "a😀", "a😀"},
		{schema.Column{Type: "text", Charset: "latin1"}, []byte{0x80, 0x81, 0xe9}, "€\u0081é"},
		{schema.Column{Type: "enum", Elems: []string{"x", "y"}}, int64(2), "y"},
		{schema.Column{Type: "enum", Elems: []string{"x", "y"}}, int64(0), ""},
		{schema.Column{Type: "set", Elems: []string{"x", "y", "z"}}, int64(6), "y,z"},
		{schema.Column{Type: "set", Elems: many}, int64(-1 << 63), "ml"},
		{schema.Column{Type: "json"}, `{"k":[1,2.0],"s":"a,b:c"}`, `{"k": [1, 2.0], "s": "a,b:c"}`}, // MySQL
		{schema.Column{Type: "json"}, []byte(`{"k":[1,  2.0]}`), `{"k":[1,  2.0]}`},                 // MariaDB
		{schema.Column{Type: "json"}, []byte{}, "null"},
		{schema.Column{Type: "binary", Length: 8}, "ab", "ab\x00\x00\x00\x00\x00\x00"},
		{schema.Column{Type: "blob"}, []byte{0, 0xff}, "\x00\xff"},
		{schema.Column{Type: "bit", Length: 1}, int64(1), "\x01"},
		{schema.Column{Type: "bit", Length: 64}, int64(-1), "\xff\xff\xff\xff\xff\xff\xff\xff"},
		{schema.Column{Type: "bit", Length: 12}, int64(0x0abc), "\x0a\xbc"},
		{schema.Column{Type: "uuid"}, string(mustHex("123e4567e89b12d3a456426614174000")), "123e4567-e89b-12d3-a456-426614174000"},
		{schema.Column{Type: "inet6"}, string(mustHex("00000000000000000000ffff01020304")), "::ffff:1.2.3.4"},
		{schema.Column{Type: "inet6"}, string(mustHex("20010db8")), "2001:db8::"},
		{schema.Column{Type: "inet4"}, "\x01\x02\x03\x04", "1.2.3.4"},
	}
	for _, p := range pairs {
		p.col.Name = "c"
		a, err := AppendValue(nil, &p.col, p.binlog)
		if err != nil {
			t.Errorf("%s %#v: %v", p.col.Type, p.binlog, err)
			continue
		}
		b, err := AppendSQLValue(nil, &p.col, TextCell([]byte(p.sql)))
		if err != nil {
			t.Errorf("%s %q: %v", p.col.Type, p.sql, err)
			continue
		}
		if string(a) != string(b) {
			t.Errorf("%s: binlog %#v -> %s, SQL %q -> %s", p.col.Type, p.binlog, a, p.sql, b)
		}
	}
}

// TestAppendSQLValueEmptyIsNotNull: an empty value, given as a nil or an
// empty slice, is the empty value of every column that has one; only a NULL
// cell is null.
func TestAppendSQLValueEmptyIsNotNull(t *testing.T) {
	cols := []schema.Column{
		{Name: "vc", Type: "varchar", Charset: "utf8mb4"}, {Name: "ch", Type: "char", Charset: "latin1"},
		{Name: "tx", Type: "text", Charset: "utf8mb4"}, {Name: "e", Type: "enum", Elems: []string{"", "a"}},
		{Name: "s", Type: "set", Elems: []string{"a", "b"}}, {Name: "vb", Type: "varbinary", Length: 4},
		{Name: "bl", Type: "blob"},
	}
	for i := range cols {
		c := &cols[i]
		for _, text := range [][]byte{nil, {}} {
			got, err := AppendSQLValue(nil, c, TextCell(text))
			if err != nil || string(got) != `""` {
				t.Errorf("%s: empty value (nil=%v) = %s, %v; want \"\"", c.Type, text == nil, got, err)
			}
		}
		if got, err := AppendSQLValue(nil, c, NullCell()); err != nil || string(got) != "null" {
			t.Errorf("%s: NULL = %s, %v", c.Type, got, err)
		}
	}
}
