package dumpfile

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strconv"
	"testing"
)

// byteSource hands out fuzz bytes, then zeros.
type byteSource struct{ b []byte }

func (s *byteSource) next() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

func (s *byteSource) bytes(n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = s.next()
	}
	return out
}

// genRows builds a row set and an encoding style from fuzz bytes.
func genRows(data []byte) ([][]Value, encStyle) {
	src := &byteSource{b: data}
	flags := src.next()
	st := encStyle{quote: '"', newer: flags&1 != 0, noise: flags&2 != 0, doubleQuote: flags&4 != 0, rowsPerStmt: int(flags>>4) % 4}
	if flags&8 != 0 {
		st.quote = '\''
	}
	ncols := int(src.next())%6 + 1
	if flags&0x40 != 0 {
		for i := range ncols {
			st.columns = append(st.columns, "c"+strconv.Itoa(i))
		}
	}
	nrows := int(src.next()) % 8
	rows := make([][]Value, nrows)
	for i := range rows {
		for range ncols {
			rows[i] = append(rows[i], genValue(src))
		}
	}
	return rows, st
}

func genValue(src *byteSource) Value {
	k := src.next()
	n := int(src.next()) % 24
	switch k % 6 {
	case 0:
		return N
	case 1:
		num := strconv.FormatInt(int64(int32(uint32(src.next())<<24|uint32(src.next())<<8)), 10)
		switch src.next() % 4 {
		case 1:
			num += "." + strconv.Itoa(int(src.next()))
		case 2:
			num += "e-" + strconv.Itoa(int(src.next())%30)
		case 3:
			num = "18446744073709551615"
		}
		return Num(num)
	case 2, 3:
		v := Value{Kind: KindString, Raw: src.bytes(n)}
		if k&0x80 != 0 {
			v.Charset = "binary"
		}
		return v
	case 4:
		return Value{Kind: KindHex, Raw: src.bytes(n)}
	default:
		return Value{Kind: KindBit, Raw: src.bytes(n % 9)}
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte(v010File))
	f.Add([]byte("INSERT INTO `t` (`a`) VALUES(1)\n,('x''y');\n"))
	f.Add([]byte("INSERT INTO t VALUES (_binary 0xABC, b'101', X'', -1.5e-3, 'a' \"b\");"))
	f.Add([]byte("INSERT INTO t VALUES (1,'abc\\"))
	f.Add([]byte("/*!40101 SET NAMES binary*/;\n-- c\n# d\n/* e */"))
	f.Add([]byte{0x07, 3, 4, 2, 10, 'a', '\'', '"', '\\', 0, '\n', 0x1a, 0xff, 1, 5, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		// 1. Any input: no panic, and the only errors are syntax errors.
		r := NewReader(bytes.NewReader(data), "fuzz.sql")
		for i := 0; ; i++ {
			row, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				var se *SyntaxError
				if !errors.As(err, &se) || se.Line < 1 {
					t.Fatalf("error %v is not a *SyntaxError with a line", err)
				}
				break
			}
			if len(row.Values) == 0 || row.Line < 1 {
				t.Fatalf("row %d: %d values, line %d", i, len(row.Values), row.Line)
			}
		}

		// 2. A row set written by the encoder parses back to itself.
		rows, st := genRows(data)
		var buf bytes.Buffer
		encodeFile(&buf, rows, st)
		got, err := collect(NewReader(bytes.NewReader(buf.Bytes()), "gen.sql"))
		if err != nil {
			t.Fatalf("%v\nfile:\n%q", err, buf.String())
		}
		if len(got) != len(rows) {
			t.Fatalf("got %d rows, want %d\nfile:\n%q", len(got), len(rows), buf.String())
		}
		for i := range rows {
			if !slices.Equal(got[i].Columns, st.columns) {
				t.Fatalf("row %d columns %q, want %q", i, got[i].Columns, st.columns)
			}
			if !slices.EqualFunc(got[i].Values, rows[i], func(a, b Value) bool {
				return a.Null == b.Null && a.Kind == b.Kind && a.Charset == b.Charset && bytes.Equal(a.Raw, b.Raw)
			}) {
				t.Fatalf("row %d:\n got %v\nwant %v\nfile:\n%q", i, got[i].Values, rows[i], buf.String())
			}
		}
	})
}
