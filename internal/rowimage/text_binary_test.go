package rowimage

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/rand"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/schema"
)

func b64s(b []byte) string { return `"` + base64.StdEncoding.EncodeToString(b) + `"` }

func TestText(t *testing.T) {
	u := schema.Column{Type: "varchar", Charset: "utf8mb4", Length: 20}
	l1 := schema.Column{Type: "text", Charset: "latin1"}
	runValueCases(t, []valueCase{
		{"ascii", u, "hello", `"hello"`, ""},
		{"bytes", u, []byte("hello"), `"hello"`, ""},
		{"empty", u, "", `""`, ""},
		{"emoji 4-byte", u, "a😀é", `"a😀é"`, ""},
		{"escapes", u, "a\"b\\c\n\r\t\b\f\x01\x1f\x7f", `"a\"b\\c\n\r\t\b\f\u0001\u001f` + "\x7f" + `"`, ""},
		{"line separators kept", u, "\u2028\u2029", "\"\u2028\u2029\"", ""},
		{"html kept", u, "<a&b>", `"<a&b>"`, ""},
		{"invalid utf8", u, "ok\xffno", "", `invalid UTF-8 at byte 2 for charset "utf8mb4"`},
		{"surrogate half is invalid", u, "\xed\xa0\x80", "", "invalid UTF-8"},
		{"utf8mb3", schema.Column{Type: "char", Charset: "utf8mb3"}, "ü", `"ü"`, ""},
		{"ascii charset", schema.Column{Type: "char", Charset: "ascii"}, "x", `"x"`, ""},
		{"latin1 cp1252 range", l1, []byte{0x80, 0x81, 0x8D, 0x8F, 0x90, 0x9D, 0x9F, 0xE9, 'a', '"'},
			"\"€\u0081\u008d\u008f\u0090\u009dŸéa\\\"\"", ""},
		{"latin1 high half", l1, []byte{0xA0, 0xFF}, "\"\u00a0ÿ\"", ""},
		{"latin1 control", l1, []byte{0x00}, `"\u0000"`, ""},
		{"charset binary is binary", schema.Column{Type: "varchar", Charset: "binary"}, []byte{0, 0xff}, b64s([]byte{0, 0xff}), ""},
		{"char charset binary pads", schema.Column{Type: "char", Charset: "binary", Length: 3}, "a", b64s([]byte{'a', 0, 0}), ""},
		{"unsupported charset", schema.Column{Type: "varchar", Charset: "utf16"}, "a", "", `unsupported charset "utf16"`},
		{"int for text", u, int64(1), "", "unexpected Go type int64"},
	})
}

func TestLatin1TableMatchesMySQL(t *testing.T) {
	// Every byte converts, the result is valid UTF-8 and distinct bytes stay
	// distinct (so the conversion round-trips).
	seen := map[rune]byte{}
	for b := 0; b < 256; b++ {
		r := latin1Rune(byte(b))
		if prev, dup := seen[r]; dup {
			t.Fatalf("bytes %#x and %#x both map to %U", prev, b, r)
		}
		seen[r] = byte(b)
	}
	for _, b := range []byte{0x81, 0x8D, 0x8F, 0x90, 0x9D} {
		if latin1Rune(b) != rune(b) {
			t.Errorf("undefined cp1252 byte %#x maps to %U, want U+%04X", b, latin1Rune(b), b)
		}
	}
	if latin1Rune(0x80) != '€' || latin1Rune(0x9F) != 'Ÿ' || latin1Rune(0x8A) != 'Š' {
		t.Error("cp1252 specials wrong")
	}
}

func TestEnumSet(t *testing.T) {
	e := schema.Column{Type: "enum", Elems: []string{"a", "b", `q"`}}
	s := schema.Column{Type: "set", Elems: []string{"a", "b", "c"}}
	many := make([]string, 64)
	for i := range many {
		many[i] = string(rune('A' + i%26))
	}
	s64 := schema.Column{Type: "set", Elems: many}
	runValueCases(t, []valueCase{
		{"enum 0 is empty", e, int64(0), `""`, ""},
		{"enum first", e, int64(1), `"a"`, ""},
		{"enum escaped label", e, int64(3), `"q\""`, ""},
		{"enum out of range", e, int64(4), "", "ENUM index 4 out of range (3 labels)"},
		{"enum negative", e, int64(-1), "", "negative ENUM index"},
		{"enum label text", e, "b", `"b"`, ""},
		{"enum float", e, 1.0, "", "unexpected Go type"},
		{"set empty", s, int64(0), `""`, ""},
		{"set a,c", s, int64(5), `"a,c"`, ""},
		{"set all", s, int64(7), `"a,b,c"`, ""},
		{"set extra bit", s, int64(8), "", "bits beyond its 3 labels"},
		{"set label text", s, "a,c", `"a,c"`, ""},
		{"set 64 all via -1", s64, int64(-1), `"` + strings.Join(many, ",") + `"`, ""},
		{"set 64 top bit", s64, int64(-1 << 63), `"L"`, ""},
		{"set uint64", s, uint64(2), `"b"`, ""},
	})
}

func TestJSONColumn(t *testing.T) {
	j := schema.Column{Type: "json", Charset: "utf8mb4"}
	runValueCases(t, []valueCase{
		// Go string: go-mysql's compact rendering of MySQL binary JSON,
		// re-printed as MySQL's SELECT prints it.
		{"mysql object", j, `{"a":1,"b":[1,2.5,"x, y: z"]}`, `"{\"a\": 1, \"b\": [1, 2.5, \"x, y: z\"]}"`, ""},
		{"mysql nested empty", j, `{"a":{},"b":[]}`, `"{\"a\": {}, \"b\": []}"`, ""},
		{"mysql escaped quote", j, `["a\" ,b","c"]`, `"[\"a\\\" ,b\", \"c\"]"`, ""},
		{"mysql stray whitespace", j, " [1 ,\n2] ", `"[1, 2]"`, ""},
		{"mysql scalar", j, `12345678901234567890`, `"12345678901234567890"`, ""},
		{"mysql emoji", j, `"😀"`, `"\"😀\""`, ""},
		{"mysql invalid", j, `{"a":`, "", "malformed JSON"},
		{"mysql not utf8", j, "\"\xff\"", "", "not UTF-8"},
		// []byte: stored text (MariaDB JSON is LONGTEXT), kept byte for byte.
		{"stored text kept", j, []byte(`{"a" :  1}`), `"{\"a\" :  1}"`, ""},
		{"stored text not utf8", j, []byte("\xff"), "", "invalid UTF-8"},
		{"empty doc is null", j, []byte{}, `"null"`, ""},
		{"partial update", j, struct{}{}, "", "binlog_row_value_options"},
	})
}

func TestBinaryBitUUIDInet(t *testing.T) {
	bin8 := schema.Column{Type: "binary", Length: 8}
	runValueCases(t, []valueCase{
		{"binary(8) trailing zeros restored", bin8, "ab", b64s([]byte{'a', 'b', 0, 0, 0, 0, 0, 0}), ""},
		{"binary(8) full", bin8, []byte{1, 2, 3, 4, 5, 6, 7, 0}, b64s([]byte{1, 2, 3, 4, 5, 6, 7, 0}), ""},
		{"binary(8) empty", bin8, "", b64s(make([]byte, 8)), ""},
		{"binary(8) too long", bin8, "123456789", "", "do not fit BINARY(8)"},
		{"binary(0)", schema.Column{Type: "binary"}, "", `""`, ""},
		{"binary(4)", schema.Column{Type: "binary", Length: 4}, "\x01", b64s([]byte{1, 0, 0, 0}), ""},
		{"binary(5)", schema.Column{Type: "binary", Length: 5}, "\x01\x02\x03\x04", b64s([]byte{1, 2, 3, 4, 0}), ""},
		{"varbinary", schema.Column{Type: "varbinary", Length: 10}, []byte{0, 1, 2}, `"AAEC"`, ""},
		{"varbinary keeps trailing zero", schema.Column{Type: "varbinary", Length: 10}, []byte{1, 0}, `"AQA="`, ""},
		{"blob empty", schema.Column{Type: "blob"}, []byte{}, `""`, ""},
		{"longblob non-utf8", schema.Column{Type: "longblob"}, []byte{0xff, 0xfe}, `"//4="`, ""},
		{"geometry", schema.Column{Type: "geometry"}, []byte{0, 0, 0, 0, 1}, b64s([]byte{0, 0, 0, 0, 1}), ""},
		{"blob int", schema.Column{Type: "blob"}, int64(1), "", "unexpected Go type"},
		{"bit(1) one", schema.Column{Type: "bit", Length: 1}, int64(1), `"AQ=="`, ""},
		{"bit(1) zero", schema.Column{Type: "bit", Length: 1}, int64(0), `"AA=="`, ""},
		{"bit(1) two", schema.Column{Type: "bit", Length: 1}, int64(2), "", "does not fit BIT(1)"},
		{"bit(64) all ones", schema.Column{Type: "bit", Length: 64}, int64(-1), b64s(bytes.Repeat([]byte{0xff}, 8)), ""},
		{"bit(64) uint64", schema.Column{Type: "bit", Length: 64}, uint64(1 << 63), b64s([]byte{0x80, 0, 0, 0, 0, 0, 0, 0}), ""},
		{"bit(10) ones", schema.Column{Type: "bit", Length: 10}, int64(0x3ff), b64s([]byte{0x03, 0xff}), ""},
		{"bit(10) overflow", schema.Column{Type: "bit", Length: 10}, int64(0x400), "", "does not fit BIT(10)"},
		{"bit(17)", schema.Column{Type: "bit", Length: 17}, int64(1), b64s([]byte{0, 0, 1}), ""},
		{"bit raw bytes", schema.Column{Type: "bit", Length: 9}, []byte{0x01, 0xff}, b64s([]byte{0x01, 0xff}), ""},
		{"bit raw short", schema.Column{Type: "bit", Length: 16}, []byte{0x05}, b64s([]byte{0, 5}), ""},
		{"bit raw too long", schema.Column{Type: "bit", Length: 8}, []byte{1, 2}, "", "do not fit BIT(8)"},
		{"bit no length", schema.Column{Type: "bit"}, int64(1), "", "BIT length 0"},
		{"uuid v1", schema.Column{Type: "uuid"}, string(mustHex("123e4567e89b12d3a456426614174000")), `"123e4567-e89b-12d3-a456-426614174000"`, ""},
		{"uuid trailing zeros", schema.Column{Type: "uuid"}, string(mustHex("ffffffffffffffffffffffff")), `"ffffffff-ffff-ffff-ffff-ffff00000000"`, ""},
		{"uuid nil", schema.Column{Type: "uuid"}, "", `"00000000-0000-0000-0000-000000000000"`, ""},
		{"uuid too long", schema.Column{Type: "uuid"}, strings.Repeat("a", 17), "", "17 bytes for a 16-byte uuid"},
		{"inet6 v4-mapped", schema.Column{Type: "inet6"}, mustHex("00000000000000000000ffff01020304"), `"::ffff:1.2.3.4"`, ""},
		{"inet6 doc", schema.Column{Type: "inet6"}, mustHex("20010db8000000000000000000000001"), `"2001:db8::1"`, ""},
		{"inet6 stripped zeros", schema.Column{Type: "inet6"}, mustHex("20010db8"), `"2001:db8::"`, ""},
		{"inet4", schema.Column{Type: "inet4"}, []byte{1, 2, 3, 4}, `"1.2.3.4"`, ""},
		{"inet4 stripped zeros", schema.Column{Type: "inet4"}, []byte{10}, `"10.0.0.0"`, ""},
		{"inet4 too long", schema.Column{Type: "inet4"}, []byte{1, 2, 3, 4, 5}, "", "5 bytes for a 4-byte inet4"},
	})
}

func mustHex(s string) []byte {
	b := make([]byte, len(s)/2)
	for i := range b {
		hi, _ := unhex(s[2*i])
		lo, _ := unhex(s[2*i+1])
		b[i] = hi<<4 | lo
	}
	return b
}

func TestInet6Format(t *testing.T) {
	// MariaDB's Inet6::to_string: the first longest zero run, even of one
	// word, is compressed; ::a.b.c.d for IPv4-compatible and ::ffff:a.b.c.d
	// for IPv4-mapped addresses.
	for _, tc := range []struct{ hex, want string }{
		{"00000000000000000000000000000000", "::"},
		{"00000000000000000000000000000001", "::1"},
		{"00000000000000000000000001020304", "::1.2.3.4"},
		{"00000000000000000000ffff00000000", "::ffff:0.0.0.0"},
		{"00000000000000000001ffff01020304", "::1:ffff:102:304"},
		{"20010db8000000010001000100010001", "2001:db8::1:1:1:1:1"},
		{"00010000000000020000000000000003", "1:0:0:2::3"},
		{"00010000000000020000000000030004", "1::2:0:0:3:4"},
		{"00010002000300040005000600070000", "1:2:3:4:5:6:7::"},
		{"fe800000000000000202b3fffe1e8329", "fe80::202:b3ff:fe1e:8329"},
		{"ffffffffffffffffffffffffffffffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
		{"000a00bc0def00000000000000000000", "a:bc:def::"},
	} {
		var a [16]byte
		copy(a[:], mustHex(tc.hex))
		if got := string(appendInet6(nil, &a)); got != `"`+tc.want+`"` {
			t.Errorf("%s: got %s, want %q", tc.hex, got, tc.want)
		}
	}
}

func TestUUIDRecordOrder(t *testing.T) {
	// RFC variant, version 1: MariaDB stores it swapped,
	// nnnnnnnnnnnn-vsss-Vhhh-mmmm-llllllll.
	mem := [16]byte(mustHex("123e4567e89b12d3a456426614174000"))
	rec := [16]byte(mustHex("426614174000a45612d3e89b123e4567"))
	if got := uuidToRecord(mem); got != rec {
		t.Fatalf("uuidToRecord = %x, want %x", got, rec)
	}
	if got := uuidFromRecord(rec); got != mem {
		t.Fatalf("uuidFromRecord = %x, want %x", got, mem)
	}
	// Version 7, version 4 non-RFC variant, nil and max: stored as is.
	for _, h := range []string{
		"01890a5d7c3e7abc8def0123456789ab",
		"123e4567e89b42d30456426614174000",
		"00000000000000000000000000000000",
		"ffffffffffffffffffffffffffffffff",
	} {
		m := [16]byte(mustHex(h))
		if got := uuidToRecord(m); got != m {
			t.Errorf("%s: uuidToRecord swapped it to %x", h, got)
		}
		if got := uuidFromRecord(m); got != m {
			t.Errorf("%s: uuidFromRecord swapped it to %x", h, got)
		}
	}
	// Every value MariaDB accepts (not version >= 8 with variant 0) survives
	// memory -> record -> memory.
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 100000; i++ {
		var m [16]byte
		r.Read(m[:])
		if int(int8(m[6]))&-int(int8(m[8]))&0x80 != 0 {
			continue // rejected by UUID::ascii_to_fbt
		}
		if got := uuidFromRecord(uuidToRecord(m)); got != m {
			t.Fatalf("%x: round trip gave %x", m, got)
		}
	}
	// The binlog carries the in-memory order: a swapped-looking value is
	// printed as is.
	got, err := AppendValue(nil, &schema.Column{Type: "uuid"}, rec[:])
	if err != nil || string(got) != `"42661417-4000-a456-12d3-e89b123e4567"` {
		t.Fatalf("binlog uuid = %s, %v", got, err)
	}
}

func TestOutputIsValidJSON(t *testing.T) {
	for _, s := range []string{"\x00\x1f\"\\", "😀\u2028", "plain"} {
		got, err := AppendValue(nil, &schema.Column{Type: "text", Charset: "utf8mb4"}, s)
		if err != nil {
			t.Fatal(err)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil || back != s {
			t.Fatalf("%q -> %s -> %q, %v", s, got, back, err)
		}
	}
}
