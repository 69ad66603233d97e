package rowimage

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/schema"
)

type valueCase struct {
	name    string
	col     schema.Column
	v       any
	want    string // canonical JSON text, when wantErr == ""
	wantErr string // substring of the error
}

func runValueCases(t *testing.T, cases []valueCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.col.Name == "" {
				tc.col.Name = "c"
			}
			prefix := []byte("PRE")
			got, err := AppendValue(prefix, &tc.col, tc.v)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("AppendValue(%#v) = %s, want error %q", tc.v, got, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "column "+tc.col.Name+" ("+tc.col.Type+")") {
					t.Fatalf("error %q, want it to contain %q and name the column", err, tc.wantErr)
				}
				if string(got) != "PRE" {
					t.Fatalf("dst changed on error: %q", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("AppendValue(%#v): %v", tc.v, err)
			}
			if string(got) != "PRE"+tc.want {
				t.Fatalf("AppendValue(%#v) = %s, want %s", tc.v, got[3:], tc.want)
			}
		})
	}
}

func intCol(typ string, unsigned bool) schema.Column {
	return schema.Column{Type: typ, Unsigned: unsigned}
}

func TestIntegers(t *testing.T) {
	runValueCases(t, []valueCase{
		{"tinyint min", intCol("tinyint", false), int8(math.MinInt8), "-128", ""},
		{"tinyint max", intCol("tinyint", false), int8(math.MaxInt8), "127", ""},
		{"tinyint unsigned max", intCol("tinyint", true), uint8(math.MaxUint8), "255", ""},
		{"tinyint unsigned via int8", intCol("tinyint", true), int8(-1), "255", ""},
		{"tinyint unsigned via int8 min", intCol("tinyint", true), int8(-128), "128", ""},
		{"tinyint over", intCol("tinyint", false), int64(128), "", "out of range"},
		{"tinyint under", intCol("tinyint", false), int64(-129), "", "out of range"},
		{"tinyint unsigned over", intCol("tinyint", true), int64(256), "", "out of range"},
		{"tinyint unsigned too negative", intCol("tinyint", true), int64(-129), "", "out of range"},
		{"smallint min", intCol("smallint", false), int16(math.MinInt16), "-32768", ""},
		{"smallint max", intCol("smallint", false), int16(math.MaxInt16), "32767", ""},
		{"smallint unsigned max", intCol("smallint", true), uint16(math.MaxUint16), "65535", ""},
		{"smallint unsigned via int16", intCol("smallint", true), int16(-1), "65535", ""},
		{"mediumint min", intCol("mediumint", false), int32(-8388608), "-8388608", ""},
		{"mediumint max", intCol("mediumint", false), int32(8388607), "8388607", ""},
		{"mediumint over", intCol("mediumint", false), int32(8388608), "", "out of range"},
		{"mediumint unsigned max", intCol("mediumint", true), uint32(16777215), "16777215", ""},
		{"mediumint unsigned over", intCol("mediumint", true), uint32(16777216), "", "out of range"},
		{"mediumint unsigned via int32", intCol("mediumint", true), int32(-1), "16777215", ""},
		{"mediumint unsigned via int32 min", intCol("mediumint", true), int32(-8388608), "8388608", ""},
		{"int min", intCol("int", false), int32(math.MinInt32), "-2147483648", ""},
		{"int max", intCol("int", false), int32(math.MaxInt32), "2147483647", ""},
		{"int unsigned max", intCol("int", true), uint32(math.MaxUint32), "4294967295", ""},
		{"int unsigned via int32", intCol("int", true), int32(-1), "4294967295", ""},
		{"bigint min", intCol("bigint", false), int64(math.MinInt64), "-9223372036854775808", ""},
		{"bigint max", intCol("bigint", false), int64(math.MaxInt64), "9223372036854775807", ""},
		{"bigint unsigned max", intCol("bigint", true), uint64(math.MaxUint64), "18446744073709551615", ""},
		{"bigint unsigned via int64", intCol("bigint", true), int64(-1), "18446744073709551615", ""},
		{"bigint unsigned via int64 min", intCol("bigint", true), int64(math.MinInt64), "9223372036854775808", ""},
		{"bigint signed given huge uint64", intCol("bigint", false), uint64(1 << 63), "", "out of range"},
		{"int as Go int", intCol("int", false), int(-5), "-5", ""},
		{"zero", intCol("int", false), int32(0), "0", ""},
		{"string is not an int", intCol("int", false), "5", "", "unexpected Go type string"},
		{"float is not an int", intCol("int", false), 5.0, "", "unexpected Go type float64"},
		{"year", schema.Column{Type: "year"}, int(2026), "2026", ""},
		{"year zero", schema.Column{Type: "year"}, int(0), "0", ""},
		{"year negative", schema.Column{Type: "year"}, int(-1), "", "out of range"},
	})
}

func TestUnexpectedTypeIsWrapped(t *testing.T) {
	c := schema.Column{Name: "ts", Type: "datetime", FSP: 0}
	_, err := AppendValue(nil, &c, time.Unix(0, 0))
	if !errors.Is(err, ErrUnexpectedType) {
		t.Fatalf("err = %v, want ErrUnexpectedType", err)
	}
	var ve *ValueError
	if !errors.As(err, &ve) || ve.Column != "ts" || ve.Type != "datetime" {
		t.Fatalf("err = %#v, want *ValueError for ts", err)
	}
	_, err = AppendValue(nil, &schema.Column{Name: "g", Type: "hyperloglog"}, "x")
	if err == nil || !strings.Contains(err.Error(), `unsupported column type "hyperloglog"`) {
		t.Fatalf("unsupported type: err = %v", err)
	}
}

func TestDecimal(t *testing.T) {
	d := func(p, s int) schema.Column { return schema.Column{Type: "decimal", Precision: p, Scale: s} }
	runValueCases(t, []valueCase{
		{"as printed", d(10, 4), "-12.3400", `"-12.3400"`, ""},
		{"bytes", d(10, 4), []byte("12.3400"), `"12.3400"`, ""},
		{"pad scale", d(10, 4), "12.34", `"12.3400"`, ""},
		{"trim zero digits", d(10, 4), "12.340000", `"12.3400"`, ""},
		{"lossy digits", d(10, 4), "12.34001", "", "more than 4 fraction digits"},
		{"zero", d(5, 2), "0.00", `"0.00"`, ""},
		{"negative zero", d(5, 2), "-0.00", `"0.00"`, ""},
		{"leading zeros", d(5, 1), "007.5", `"7.5"`, ""},
		{"scale 0", d(5, 0), "123", `"123"`, ""},
		{"scale 0 with zero fraction", d(5, 0), "123.0", `"123"`, ""},
		{"only fraction", d(5, 5), "0.12345", `"0.12345"`, ""},
		{"max 65,30", d(65, 30), "99999999999999999999999999999999999.999999999999999999999999999999",
			`"99999999999999999999999999999999999.999999999999999999999999999999"`, ""},
		{"too many integer digits", d(4, 1), "1234.5", "", "exceeds DECIMAL(4,1)"},
		{"exponent", d(10, 2), "1e5", "", "malformed decimal"},
		{"empty", d(10, 2), "", "", "malformed decimal"},
		{"dot only", d(10, 2), "1.", "", "malformed decimal"},
		{"no integer part", d(10, 2), ".5", "", "malformed decimal"},
		{"plus sign", d(10, 2), "+1.00", "", "malformed decimal"},
		{"float", d(10, 2), 1.5, "", "unexpected Go type float64"},
	})
}

func TestFloat(t *testing.T) {
	fl, db := schema.Column{Type: "float"}, schema.Column{Type: "double"}
	runValueCases(t, []valueCase{
		{"float 0.1", fl, float32(0.1), "0.1", ""},
		{"float 1.5", fl, float32(1.5), "1.5", ""},
		{"float max", fl, float32(math.MaxFloat32), "3.4028235e+38", ""},
		{"float lowest", fl, float32(-math.MaxFloat32), "-3.4028235e+38", ""},
		{"float smallest denormal", fl, float32(math.SmallestNonzeroFloat32), "1e-45", ""},
		{"float smallest normal", fl, math.Float32frombits(0x00800000), "1.1754944e-38", ""},
		{"float 2^24", fl, float32(16777216), "1.6777216e+07", ""},
		{"float negative zero", fl, float32(math.Copysign(0, -1)), "-0", ""},
		{"float zero", fl, float32(0), "0", ""},
		{"float given exact float64", fl, 0.5, "0.5", ""},
		{"float given inexact float64", fl, 0.1, "", "not a float32"},
		{"float NaN", fl, float32(math.NaN()), "", "cannot be stored"},
		{"float Inf", fl, float32(math.Inf(1)), "", "cannot be stored"},
		{"double 0.1", db, 0.1, "0.1", ""},
		{"double max", db, math.MaxFloat64, "1.7976931348623157e+308", ""},
		{"double smallest", db, math.SmallestNonzeroFloat64, "5e-324", ""},
		{"double big int", db, 1e21, "1e+21", ""},
		{"double from float32", db, float32(0.1), "0.10000000149011612", ""},
		{"double NaN", db, math.NaN(), "", "cannot be stored"},
		{"double -Inf", db, math.Inf(-1), "", "cannot be stored"},
		{"double string", db, "0.1", "", "unexpected Go type"},
	})
}

func TestTemporal(t *testing.T) {
	date := schema.Column{Type: "date"}
	dt := func(fsp int) schema.Column { return schema.Column{Type: "datetime", FSP: fsp} }
	ts := func(fsp int) schema.Column { return schema.Column{Type: "timestamp", FSP: fsp} }
	tm := func(fsp int) schema.Column { return schema.Column{Type: "time", FSP: fsp} }
	runValueCases(t, []valueCase{
		{"date", date, "2026-11-29", `"2026-11-29"`, ""},
		{"date bytes", date, []byte("2026-11-29"), `"2026-11-29"`, ""},
		{"zero date", date, "0000-00-00", `"0000-00-00"`, ""},
		{"zero in date", date, "2026-00-00", `"2026-00-00"`, ""},
		{"date bad month", date, "2026-13-01", "", "malformed date"},
		{"date trailing", date, "2026-11-29 ", "", "malformed date"},
		{"datetime fsp6", dt(6), "2026-11-29 08:00:00.123456", `"2026-11-29 08:00:00.123456"`, ""},
		{"datetime pad fsp", dt(6), "2026-11-29 08:00:00", `"2026-11-29 08:00:00.000000"`, ""},
		{"datetime fsp3", dt(3), "2026-11-29 08:00:00.5", `"2026-11-29 08:00:00.500"`, ""},
		{"datetime trim zeros", dt(0), "2026-11-29 08:00:00.000", `"2026-11-29 08:00:00"`, ""},
		{"datetime lossy", dt(0), "2026-11-29 08:00:00.5", "", "does not fit fsp 0"},
		{"datetime zero", dt(0), "0000-00-00 00:00:00", `"0000-00-00 00:00:00"`, ""},
		{"datetime zero fsp3", dt(3), "0000-00-00 00:00:00.000", `"0000-00-00 00:00:00.000"`, ""},
		{"datetime T", dt(0), "2026-11-29T08:00:00", "", "malformed datetime"},
		{"datetime hour 24", dt(0), "2026-11-29 24:00:00", "", "malformed datetime"},
		{"datetime dot no digits", dt(3), "2026-11-29 08:00:00.", "", "malformed datetime"},
		{"datetime 7 digits", dt(6), "2026-11-29 08:00:00.1234567", "", "does not fit"},
		{"datetime bad fsp", dt(7), "2026-11-29 08:00:00", "", "fractional seconds precision 7"},
		{"timestamp utc", ts(6), "2038-01-19 03:14:07.999999", `"2038-01-19 03:14:07.999999"`, ""},
		{"timestamp zero", ts(2), "0000-00-00 00:00:00.00", `"0000-00-00 00:00:00.00"`, ""},
		{"time min", tm(6), "-838:59:59", `"-838:59:59.000000"`, ""},
		{"time max", tm(0), "838:59:59", `"838:59:59"`, ""},
		{"time MariaDB max", tm(6), "838:59:59.999999", `"838:59:59.999999"`, ""},
		{"time 839", tm(0), "839:00:00", "", "out of range"},
		{"time pad", tm(2), "12:00:00", `"12:00:00.00"`, ""},
		{"time negative fraction", tm(1), "-00:00:00.5", `"-00:00:00.5"`, ""},
		{"time negative zero", tm(0), "-00:00:00", `"00:00:00"`, ""},
		{"time one hour digit", tm(0), "5:00:00", `"05:00:00"`, ""},
		{"time minute 60", tm(0), "12:60:00", "", "malformed time"},
		{"time four hour digits", tm(0), "0838:00:00", "", "malformed time"},
		{"time garbage", tm(0), "noon", "", "malformed time"},
		{"time int", tm(0), int64(5), "", "unexpected Go type"},
	})
}
