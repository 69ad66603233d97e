package snapshot

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// slowAppendSQL is what column.appendSQL did before numbers took one pass:
// the canonical form, then the canonical form parsed.
func slowAppendSQL(c *column, canon []byte, v rowimage.Cell, scratch *[]byte, out *value) ([]byte, error) {
	at := len(canon)
	canon, err := rowimage.AppendSQLValue(canon, c.col, v)
	if err != nil {
		return canon, err
	}
	return canon, c.parse(canon[at:], at, scratch, out)
}

// TestAppendSQLOnePassEqualsParse: for every integer width and sign, FLOAT
// and DOUBLE (and the other classes, which still parse), the one-pass
// decode gives the same canonical text, the same value (bit for bit: -0
// stays -0) and the same error as canonicalising and parsing the text.
func TestAppendSQLOnePassEqualsParse(t *testing.T) {
	ints := []string{"0", "-0", "00", "007", "-007", "1", "-1", "+1", "", "-", "1.0", "1e3", " 1", "1 ", "0x10", "١",
		"127", "128", "-128", "-129", "255", "256", "32767", "32768", "-32768", "-32769", "65535", "65536",
		"8388607", "8388608", "-8388608", "-8388609", "16777215", "16777216",
		"2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295", "4294967296",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"18446744073709551615", "18446744073709551616", "-18446744073709551615", "-18446744073709551616",
		"000000000000000000000000009223372036854775807", "99999999999999999999999999999"}
	floats := []string{"0", "-0", "0.0", "-0.0", "+0", "1", "-1", "1.5", "-1.5", "01.50", "1e3", "1E3", "1e+3", "1e-3", "-1.5e-7",
		".5", "5.", "1e308", "1.7976931348623157e308", "1.8e308", "-1.8e308", "4.9e-324", "2.5e-324", "1e-400",
		"3.4028234663852886e38", "3.4028235e38", "3.5e38", "-3.5e38", "1.401298464324817e-45", "1e-46",
		"0.1", "0.30000000000000004", "123456789012345678901234567890", "nan", "inf", "-inf", "0x1p3", "1_0", "", "e", "1e", "--1", "1.2.3"}
	type typed struct {
		col  schema.Column
		vals []string
	}
	var cases []typed
	for _, typ := range []string{"tinyint", "smallint", "mediumint", "int", "bigint"} {
		cases = append(cases, typed{schema.Column{Name: typ, Type: typ}, ints},
			typed{schema.Column{Name: typ + "u", Type: typ, Unsigned: true}, ints})
	}
	cases = append(cases,
		typed{schema.Column{Name: "f", Type: "float"}, floats},
		typed{schema.Column{Name: "d", Type: "double"}, floats},
		typed{schema.Column{Name: "y", Type: "year"}, append([]string{"1901", "2155", "0000", "10000"}, ints...)},
		typed{schema.Column{Name: "dec", Type: "decimal", Precision: 12, Scale: 2},
			[]string{"0", "-0", "-0.00", "1.5", "-1.50", "001.25", "1.250", "1.255", "9999999999.99", "99999999999.99", ".5", "1e3", "12.3456"}},
		typed{schema.Column{Name: "dec0", Type: "decimal", Precision: 65, Scale: 0},
			[]string{"0", "-0", strings.Repeat("9", 65), strings.Repeat("9", 66), "-" + strings.Repeat("9", 65), "1.0", "1.5"}},
		typed{schema.Column{Name: "dt", Type: "datetime", FSP: 6}, []string{"2026-11-29 08:00:00.123456", "0000-00-00 00:00:00.000000", "2026-11-29", "x"}},
		typed{schema.Column{Name: "s", Type: "varchar", Length: 20, Charset: "utf8mb4"}, []string{"", "a", "café \"q\" \\ \n \x00", "\xff"}},
		typed{schema.Column{Name: "b", Type: "varbinary", Length: 20}, []string{"", "\x00\xff", "abc"}},
	)
	tbl := &schema.Table{Schema: "s", Name: "t"}
	for _, c := range cases {
		tbl.Columns = append(tbl.Columns, c.col)
	}
	sc, err := ArrowSchema(tbl)
	if err != nil {
		t.Fatal(err)
	}
	cols := newColumns(tbl, sc)
	onePass := 0
	for i, c := range cases {
		col := &cols[i]
		if col.pass != parseCanonical {
			onePass++
		}
		for _, raw := range c.vals {
			prefix := []byte("prefix")
			var gScr, wScr []byte
			var got, want value
			g, gerr := col.appendSQL(prefix, rowimage.TextCell([]byte(raw)), &gScr, &got)
			w, werr := slowAppendSQL(col, prefix, rowimage.TextCell([]byte(raw)), &wScr, &want)
			name := fmt.Sprintf("%s %q", col.dt, raw)
			if fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Errorf("%s: error %v, want %v", name, gerr, werr)
				continue
			}
			if string(g) != string(w) {
				t.Errorf("%s: canonical %q, want %q", name, g, w)
			}
			if gerr != nil {
				continue
			}
			if got.i != want.i || got.u != want.u || math.Float64bits(got.f) != math.Float64bits(want.f) ||
				string(got.bytes(g, gScr)) != string(want.bytes(w, wScr)) {
				t.Errorf("%s: value %+v, want %+v", name, got, want)
			}
		}
	}
	if onePass != 12 {
		t.Fatalf("%d columns take one pass, want the 10 integer and 2 float columns", onePass)
	}
}
