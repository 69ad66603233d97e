package rowimage

import (
	"math"
	"strconv"
	"testing"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// TestAppendSQLIntAndFloatReturnTheirText: the number AppendSQLInt and
// AppendSQLFloat return is the one their canonical text denotes; on error
// dst is returned as given; a column of another type is refused.
func TestAppendSQLIntAndFloatReturnTheirText(t *testing.T) {
	big := &schema.Column{Name: "b", Type: "bigint"}
	for _, raw := range []string{"0", "-0", "-9223372036854775808", "9223372036854775807", "-0042"} {
		out, mag, neg, err := AppendSQLInt([]byte("x"), big, 64, []byte(raw))
		want, _ := strconv.ParseInt(string(out[1:]), 10, 64)
		got := int64(mag)
		if neg {
			got = -int64(mag-1) - 1
		}
		if err != nil || got != want || (mag == 0 && neg) {
			t.Errorf("bigint %q: %q mag %d neg %v err %v", raw, out, mag, neg, err)
		}
	}
	ubig := &schema.Column{Name: "u", Type: "bigint", Unsigned: true}
	if out, mag, _, err := AppendSQLInt(nil, ubig, 64, []byte("18446744073709551615")); err != nil || mag != math.MaxUint64 || string(out) != "18446744073709551615" {
		t.Errorf("bigint unsigned max: %q %d %v", out, mag, err)
	}
	if out, _, _, err := AppendSQLInt([]byte("keep"), ubig, 64, []byte("-1")); err == nil || string(out) != "keep" {
		t.Errorf("negative unsigned: %q %v", out, err)
	}
	if _, _, _, err := AppendSQLInt(nil, &schema.Column{Name: "d", Type: "double"}, 0, []byte("1")); err == nil {
		t.Error("AppendSQLInt took a DOUBLE column")
	}
	dbl, flt := &schema.Column{Name: "d", Type: "double"}, &schema.Column{Name: "f", Type: "float"}
	for _, raw := range []string{"-0", "1.5e-7", "0.1", "1.7976931348623157e308", "3.4028234663852886e38"} {
		out, f, err := AppendSQLFloat(nil, dbl, []byte(raw))
		want, _ := strconv.ParseFloat(string(out), 64)
		if err != nil || math.Float64bits(f) != math.Float64bits(want) {
			t.Errorf("double %q: %q %v %v", raw, out, f, err)
		}
		out, f, err = AppendSQLFloat(nil, flt, []byte(raw))
		want, _ = strconv.ParseFloat(string(out), 32)
		if err != nil && raw != "1.7976931348623157e308" || err == nil && math.Float64bits(f) != math.Float64bits(want) {
			t.Errorf("float %q: %q %v %v", raw, out, f, err)
		}
	}
	if out, _, err := AppendSQLFloat([]byte("keep"), dbl, []byte("1e400")); err == nil || string(out) != "keep" {
		t.Errorf("1e400: %q %v", out, err)
	}
	if _, _, err := AppendSQLFloat(nil, big, []byte("1")); err == nil {
		t.Error("AppendSQLFloat took a BIGINT column")
	}
}
