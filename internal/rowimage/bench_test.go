package rowimage

import (
	"testing"

	"github.com/dbtrail/dbtrail/internal/schema"
)

func BenchmarkImage(b *testing.B) {
	tb, row := sampleTable(), sampleRow()
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendImage(buf[:0], tb, row); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkImageAlloc(b *testing.B) {
	tb, row := sampleTable(), sampleRow()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Image(tb, row); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkKey(b *testing.B) {
	tb, row := sampleTable(), sampleRow()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Key(tb, row); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAppendValueDoesNotAllocate pins the no-allocation contract for the
// common types once dst has capacity.
func TestAppendValueDoesNotAllocate(t *testing.T) {
	vals := []struct {
		c schema.Column
		v any
	}{
		{schema.Column{Type: "bigint", Unsigned: true}, any(uint64(18446744073709551615))},
		{schema.Column{Type: "int"}, any(int32(-123456))},
		{schema.Column{Type: "bigint", Unsigned: true}, any(int64(-5))},
		{schema.Column{Type: "varchar", Charset: "utf8mb4"}, any("hello \"world\" 😀")},
		{schema.Column{Type: "text", Charset: "utf8mb4"}, any([]byte("line\nbreak"))},
		{schema.Column{Type: "text", Charset: "latin1"}, any([]byte("caf\xe9"))},
		{schema.Column{Type: "decimal", Precision: 10, Scale: 2}, any("123.45")},
		{schema.Column{Type: "datetime", FSP: 6}, any("2026-11-29 08:00:00")},
		{schema.Column{Type: "time", FSP: 0}, any("-12:00:00")},
		{schema.Column{Type: "double"}, any(2.5)},
		{schema.Column{Type: "enum", Elems: []string{"a", "b"}}, any(int64(2))},
		{schema.Column{Type: "binary", Length: 16}, any("abc")},
		{schema.Column{Type: "bit", Length: 64}, any(int64(-1))},
		{schema.Column{Type: "uuid"}, any(string(make([]byte, 16)))},
		{schema.Column{Type: "inet6"}, any(string(make([]byte, 16)))},
	}
	dst := make([]byte, 0, 256)
	for _, tc := range vals {
		c := tc.c
		n := testing.AllocsPerRun(100, func() {
			var err error
			if dst, err = AppendValue(dst[:0], &c, tc.v); err != nil {
				t.Fatal(err)
			}
		})
		if n != 0 {
			t.Errorf("%s %T: %v allocs per call", c.Type, tc.v, n)
		}
	}
}
