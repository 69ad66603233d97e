package rowimage

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"
	"unicode/utf8"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// fuzzColumns covers every kind; fuzzers pick one by index.
var fuzzColumns = []schema.Column{
	{Name: "ti", Type: "tinyint"}, {Name: "tiu", Type: "tinyint", Unsigned: true},
	{Name: "si", Type: "smallint"}, {Name: "mi", Type: "mediumint", Unsigned: true},
	{Name: "i", Type: "int"}, {Name: "bi", Type: "bigint"}, {Name: "biu", Type: "bigint", Unsigned: true},
	{Name: "y", Type: "year"},
	{Name: "d", Type: "decimal", Precision: 10, Scale: 4}, {Name: "d0", Type: "decimal", Precision: 5},
	{Name: "f", Type: "float"}, {Name: "db", Type: "double"},
	{Name: "dt", Type: "date"}, {Name: "dtm", Type: "datetime", FSP: 3}, {Name: "ts", Type: "timestamp", FSP: 6},
	{Name: "tm", Type: "time", FSP: 2}, {Name: "tm0", Type: "time"},
	{Name: "vc", Type: "varchar", Charset: "utf8mb4"}, {Name: "l1", Type: "text", Charset: "latin1"},
	{Name: "e", Type: "enum", Elems: []string{"a", "b\"", "ü"}}, {Name: "s", Type: "set", Elems: []string{"x", "y", "z"}},
	{Name: "j", Type: "json"},
	{Name: "bn", Type: "binary", Length: 5}, {Name: "vb", Type: "varbinary", Length: 9}, {Name: "bl", Type: "blob"},
	{Name: "b1", Type: "bit", Length: 1}, {Name: "b12", Type: "bit", Length: 12}, {Name: "b64", Type: "bit", Length: 64},
	{Name: "u", Type: "uuid"}, {Name: "i6", Type: "inet6"}, {Name: "i4", Type: "inet4"},
}

func fuzzCol(i uint8) *schema.Column { return &fuzzColumns[int(i)%len(fuzzColumns)] }

// sqlRawOf turns a canonical value back into the text SELECT would return.
func sqlRawOf(t *testing.T, c *schema.Column, canon []byte) []byte {
	k, _ := kindOf(c)
	if canon[0] != '"' {
		return canon // numbers
	}
	var s string
	if err := json.Unmarshal(canon, &s); err != nil {
		t.Fatalf("%s: canonical %s is not a JSON string: %v", c.Name, canon, err)
	}
	switch k {
	case kFixedBinary, kBinary, kBit:
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("%s: bad base64 %s", c.Name, canon)
		}
		return b
	}
	return []byte(s)
}

// checkCanonical asserts that out is valid JSON and a fixpoint: reading its
// SELECT form back gives the same bytes.
func checkCanonical(t *testing.T, c *schema.Column, out []byte) {
	if !json.Valid(out) {
		t.Fatalf("%s: invalid JSON %q", c.Name, out)
	}
	if string(out) == "null" {
		return
	}
	again, err := AppendSQLValue(nil, c, TextCell(sqlRawOf(t, c, out)))
	if err != nil || !bytes.Equal(again, out) {
		t.Fatalf("%s: %s is not a fixpoint: %s, %v", c.Name, out, again, err)
	}
}

func FuzzAppendSQLValue(f *testing.F) {
	for i := range fuzzColumns {
		for _, s := range []string{"", "0", "-1", "255", "18446744073709551615", "1.5", "-12.3400", "1e38",
			"2026-11-29", "2026-11-29 08:00:00.123", "-838:59:59", "a😀", "a,b", `{"a": 1}`, "::ffff:1.2.3.4",
			"123e4567-e89b-12d3-a456-426614174000", "1.2.3.4", "\xff\x00"} {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, ci uint8, raw []byte) {
		c := fuzzCol(ci)
		out, err := AppendSQLValue([]byte("x"), c, TextCell(raw))
		if err != nil {
			if string(out) != "x" {
				t.Fatalf("dst changed on error")
			}
			return
		}
		checkCanonical(t, c, out[1:])
	})
}

// fuzzValue builds a go-mysql-like value of the Go type selected by mode.
func fuzzValue(mode uint8, n int64, data []byte) any {
	switch mode % 16 {
	case 0:
		return nil
	case 1:
		return int8(n)
	case 2:
		return int16(n)
	case 3:
		return int32(n)
	case 4:
		return n
	case 5:
		return uint8(n)
	case 6:
		return uint16(n)
	case 7:
		return uint32(n)
	case 8:
		return uint64(n)
	case 9:
		return math.Float32frombits(uint32(n))
	case 10:
		return math.Float64frombits(uint64(n))
	case 11:
		return string(data)
	case 12:
		return data
	case 13:
		return int(n)
	case 14:
		return struct{}{}
	}
	return true
}

func FuzzAppendValue(f *testing.F) {
	for i := range fuzzColumns {
		for m := uint8(0); m < 16; m++ {
			f.Add(uint8(i), m, int64(-1), []byte("2026-11-29 08:00:00"))
		}
	}
	f.Fuzz(func(t *testing.T, ci, mode uint8, n int64, data []byte) {
		c := fuzzCol(ci)
		out, err := AppendValue([]byte("x"), c, fuzzValue(mode, n, data))
		if err != nil {
			if string(out) != "x" {
				t.Fatalf("dst changed on error")
			}
			return
		}
		checkCanonical(t, c, out[1:])
	})
}

func FuzzImageRoundTrip(f *testing.F) {
	f.Add("id", int64(42), []byte("hello"), uint8(0))
	f.Add("we\"ird\\", int64(-1), []byte("\x00\xff"), uint8(255))
	f.Fuzz(func(t *testing.T, name string, n int64, data []byte, nulls uint8) {
		if !utf8.ValidString(name) || name == "" {
			name = "k"
		}
		var b8 [8]byte
		binary.BigEndian.PutUint64(b8[:], uint64(n))
		tb := &schema.Table{Schema: "s", Name: "t", KeyKind: schema.KeyPrimary, Key: []string{name}}
		tb.Columns = []schema.Column{
			{Name: name, Type: "bigint", Unsigned: true},
			{Name: "v", Type: "varchar", Charset: "utf8mb4"},
			{Name: "l", Type: "text", Charset: "latin1"},
			{Name: "b", Type: "blob"},
			{Name: "bit", Type: "bit", Length: 64},
			{Name: "set", Type: "set", Elems: []string{"a", "b", "c", "d", "e", "f", "g", "h"}},
			{Name: "f", Type: "double"},
			{Name: "u", Type: "uuid"},
		}
		row := []any{n, string(data), data, data, n, int64(uint8(n)), float64(n), b8[:]}
		for i := 1; i < len(row); i++ {
			if nulls&(1<<i) != 0 {
				row[i] = nil
			}
		}
		img, err := Image(tb, row)
		if err != nil {
			if utf8.Valid(data) {
				t.Fatalf("Image: %v", err)
			}
			return
		}
		fields, err := DecodeImage(img)
		if err != nil || len(fields) != len(tb.Columns) {
			t.Fatalf("DecodeImage(%s): %v", img, err)
		}
		for i, fl := range fields {
			want, _ := AppendValue(nil, &tb.Columns[i], row[i])
			if fl.Name != tb.Columns[i].Name || !bytes.Equal(fl.Raw, want) {
				t.Fatalf("field %d: %q:%s, want %q:%s", i, fl.Name, fl.Raw, tb.Columns[i].Name, want)
			}
		}
		k1, err1 := Key(tb, row)
		k2, err2 := KeyFromImage(tb, img)
		if err1 != nil || err2 != nil || k1 != k2 || !json.Valid([]byte(k1)) {
			t.Fatalf("Key %s %v, KeyFromImage %s %v", k1, err1, k2, err2)
		}
	})
}

func FuzzDecodeImage(f *testing.F) {
	f.Add([]byte(sampleImage))
	f.Add([]byte(`{"a":[1,{"b":"\u00e9"}],"c":-0.5e-3}`))
	f.Fuzz(func(t *testing.T, image []byte) {
		fields, err := DecodeImage(image)
		if err != nil {
			return
		}
		if !json.Valid(image) {
			t.Fatalf("accepted invalid JSON %q", image)
		}
		for _, fl := range fields {
			if !json.Valid(fl.Raw) {
				t.Fatalf("field %q raw %q invalid", fl.Name, fl.Raw)
			}
		}
	})
}
