package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// directCol is a column of the differential test: its definition, its
// table map type and meta, and a generator of its binlog bytes.
type directCol struct {
	col  schema.Column
	tp   byte
	meta uint16
	gen  func(r *rand.Rand) []byte
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// intCol is an integer column of width bytes; values favour the extremes.
func intCol(typ string, unsigned bool, tp byte, width int) directCol {
	return directCol{col: schema.Column{Type: typ, Unsigned: unsigned}, tp: tp, gen: func(r *rand.Rand) []byte {
		b := randBytes(r, width)
		switch r.IntN(4) {
		case 0:
			for i := range b {
				b[i] = 0xFF // -1, or the unsigned maximum (BIT(64)-like all ones)
			}
		case 1:
			clear(b)
			b[width-1] = 0x80 // the signed minimum
		}
		return b
	}}
}

// lenPrefixed is b after its little-endian length in w bytes.
func lenPrefixed(w int, b []byte) []byte {
	var l [8]byte
	binary.LittleEndian.PutUint64(l[:], uint64(len(b)))
	return append(l[:w:w], b...)
}

// text is random character data: ASCII with quotes, controls and
// multibyte UTF-8, sometimes an invalid byte, sometimes trailing spaces.
func text(r *rand.Rand, maxBytes int) []byte {
	pieces := []string{"a", "Z", " ", "\"", "\\", "\n", "\x00", "é", "€", "😀", "\x7f", "0"}
	var b []byte
	for n := r.IntN(maxBytes/4 + 1); n > 0; n-- {
		b = append(b, pieces[r.IntN(len(pieces))]...)
	}
	if r.IntN(20) == 0 {
		b = append(b, 0xC3) // truncated UTF-8
	}
	return b
}

// decimalBytes encodes a random DECIMAL(prec, scale) value as MySQL stores
// it (sometimes random bytes instead).
func decimalBytes(r *rand.Rand, prec, scale int) []byte {
	integral := prec - scale
	ui, uf := integral/9, scale/9
	ci, cf := integral-ui*9, scale-uf*9
	size := ui*4 + decimalDigits[ci] + uf*4 + decimalDigits[cf]
	if r.IntN(30) == 0 {
		return randBytes(r, size)
	}
	digits := func(n int) string {
		var s strings.Builder
		for range n {
			s.WriteByte(byte('0' + r.IntN(10)))
		}
		return s.String()
	}
	intDigits, fracDigits := digits(integral), digits(scale)
	if r.IntN(3) == 0 {
		intDigits = strings.Repeat("0", integral) // leading zeros, zero
	}
	var out []byte
	put := func(s string, size int) {
		var v uint64
		for _, c := range s {
			v = v*10 + uint64(c-'0')
		}
		for i := size - 1; i >= 0; i-- {
			out = append(out, byte(v>>(8*uint(i))))
		}
	}
	put(intDigits[:ci], decimalDigits[ci])
	for g := range ui {
		put(intDigits[ci+9*g:ci+9*g+9], 4)
	}
	for g := range uf {
		put(fracDigits[9*g:9*g+9], 4)
	}
	put(fracDigits[9*uf:], decimalDigits[cf])
	if r.IntN(2) == 0 {
		for i := range out {
			out[i] ^= 0xFF
		}
	}
	out[0] ^= 0x80
	return out
}

func directCols() []directCol {
	cols := []directCol{
		intCol("int", false, mysql.MYSQL_TYPE_LONG, 4), // the key
		intCol("tinyint", false, mysql.MYSQL_TYPE_TINY, 1),
		intCol("tinyint", true, mysql.MYSQL_TYPE_TINY, 1),
		intCol("smallint", false, mysql.MYSQL_TYPE_SHORT, 2),
		intCol("smallint", true, mysql.MYSQL_TYPE_SHORT, 2),
		intCol("mediumint", false, mysql.MYSQL_TYPE_INT24, 3),
		intCol("mediumint", true, mysql.MYSQL_TYPE_INT24, 3),
		intCol("int", true, mysql.MYSQL_TYPE_LONG, 4),
		intCol("bigint", false, mysql.MYSQL_TYPE_LONGLONG, 8),
		intCol("bigint", true, mysql.MYSQL_TYPE_LONGLONG, 8),
		{col: schema.Column{Type: "float"}, tp: mysql.MYSQL_TYPE_FLOAT, meta: 4, gen: func(r *rand.Rand) []byte {
			return []byte{0, 0, 0, 0x80, byte(r.UintN(256)), 0, 0, 0}[r.IntN(2)*4:][:4] // -0, 0, or random-ish
		}},
		{col: schema.Column{Type: "float"}, tp: mysql.MYSQL_TYPE_FLOAT, meta: 4, gen: func(r *rand.Rand) []byte { return randBytes(r, 4) }},
		{col: schema.Column{Type: "double"}, tp: mysql.MYSQL_TYPE_DOUBLE, meta: 8, gen: func(r *rand.Rand) []byte { return randBytes(r, 8) }},
		{col: schema.Column{Type: "year"}, tp: mysql.MYSQL_TYPE_YEAR, gen: func(r *rand.Rand) []byte { return randBytes(r, 1) }},
		{col: schema.Column{Type: "date"}, tp: mysql.MYSQL_TYPE_DATE, gen: func(r *rand.Rand) []byte {
			v := r.UintN(10000)*512 + r.UintN(13)*32 + r.UintN(32) // zero dates and zero parts included
			if r.IntN(5) == 0 {
				v = 0
			}
			return []byte{byte(v), byte(v >> 8), byte(v >> 16)}
		}},
		{col: schema.Column{Type: "char", Length: 2, Charset: "utf8mb4"}, tp: mysql.MYSQL_TYPE_STRING, meta: 0xFE<<8 | 8,
			gen: func(r *rand.Rand) []byte { return lenPrefixed(1, text(r, 8)) }},
		{col: schema.Column{Type: "char", Length: 255, Charset: "utf8mb4"}, tp: mysql.MYSQL_TYPE_STRING,
			meta: uint16(0xFE^((1020&0x300)>>4))<<8 | 1020&0xFF, gen: func(r *rand.Rand) []byte { return lenPrefixed(2, text(r, 1020)) }},
		{col: schema.Column{Type: "char", Length: 24, Charset: "latin1"}, tp: mysql.MYSQL_TYPE_STRING, meta: 0xFE<<8 | 24,
			gen: func(r *rand.Rand) []byte { return lenPrefixed(1, randBytes(r, r.IntN(25))) }},
		{col: schema.Column{Type: "binary", Length: 16, Charset: "binary"}, tp: mysql.MYSQL_TYPE_STRING, meta: 0xFE<<8 | 16,
			gen: func(r *rand.Rand) []byte { // trailing 0x00 stripped in the binlog
				b := randBytes(r, r.IntN(17))
				return lenPrefixed(1, bytes.TrimRight(b, "\x00"))
			}},
		{col: schema.Column{Type: "varchar", Length: 500, Charset: "utf8mb4"}, tp: mysql.MYSQL_TYPE_VARCHAR, meta: 2000,
			gen: func(r *rand.Rand) []byte { return lenPrefixed(2, text(r, 2000)) }},
		{col: schema.Column{Type: "varchar", Length: 20, Charset: "latin1"}, tp: mysql.MYSQL_TYPE_VARCHAR, meta: 20,
			gen: func(r *rand.Rand) []byte { return lenPrefixed(1, randBytes(r, r.IntN(21))) }},
		{col: schema.Column{Type: "varbinary", Length: 50, Charset: "binary"}, tp: mysql.MYSQL_TYPE_VARCHAR, meta: 50,
			gen: func(r *rand.Rand) []byte { return lenPrefixed(1, randBytes(r, r.IntN(51))) }},
		{col: schema.Column{Type: "text", Charset: "utf8mb4"}, tp: mysql.MYSQL_TYPE_BLOB, meta: 2,
			gen: func(r *rand.Rand) []byte { return lenPrefixed(2, text(r, 300)) }},
		{col: schema.Column{Type: "tinyblob", Charset: "binary"}, tp: mysql.MYSQL_TYPE_BLOB, meta: 1,
			gen: func(r *rand.Rand) []byte { return lenPrefixed(1, randBytes(r, r.IntN(40))) }},
		{col: schema.Column{Type: "mediumblob", Charset: "binary"}, tp: mysql.MYSQL_TYPE_BLOB, meta: 3,
			gen: func(r *rand.Rand) []byte { return lenPrefixed(3, randBytes(r, r.IntN(40))) }},
		{col: schema.Column{Type: "json", Charset: "utf8mb4"}, tp: mysql.MYSQL_TYPE_BLOB, meta: 4, // MariaDB: JSON is LONGTEXT
			gen: func(r *rand.Rand) []byte {
				docs := []string{`{"a": [1, 2.50, "x\u00e9"]}`, `[]`, `null`, `"s"`, `{"k":`, `12e3`, ``, `{"b":true}`}
				return lenPrefixed(4, []byte(docs[r.IntN(len(docs))]))
			}},
		{col: schema.Column{Type: "enum", Elems: []string{"a", "b", "c"}}, tp: mysql.MYSQL_TYPE_STRING, meta: 0xF7<<8 | 1,
			gen: func(r *rand.Rand) []byte { return []byte{byte(r.IntN(5))} }},
		{col: schema.Column{Type: "set", Elems: []string{"x", "y", "z"}}, tp: mysql.MYSQL_TYPE_STRING, meta: 0xF8<<8 | 1,
			gen: func(r *rand.Rand) []byte { return []byte{byte(r.IntN(9))} }},
	}
	labels := make([]string, 64)
	for i := range labels {
		labels[i] = fmt.Sprint("m", i)
	}
	cols = append(cols, directCol{col: schema.Column{Type: "set", Elems: labels}, tp: mysql.MYSQL_TYPE_STRING, meta: 0xF8<<8 | 8,
		gen: func(r *rand.Rand) []byte { return intCol("", true, 0, 8).gen(r) }})
	labels300 := make([]string, 300)
	for i := range labels300 {
		labels300[i] = fmt.Sprint("e", i)
	}
	cols = append(cols, directCol{col: schema.Column{Type: "enum", Elems: labels300}, tp: mysql.MYSQL_TYPE_STRING, meta: 0xF7<<8 | 2,
		gen: func(r *rand.Rand) []byte { v := r.IntN(302); return []byte{byte(v), byte(v >> 8)} }})
	for _, ps := range [][2]int{{12, 2}, {4, 4}, {8, 0}, {65, 30}, {10, 5}, {19, 0}, {1, 0}, {18, 9}} {
		p, s := ps[0], ps[1]
		cols = append(cols, directCol{col: schema.Column{Type: "decimal", Precision: p, Scale: s}, tp: mysql.MYSQL_TYPE_NEWDECIMAL,
			meta: uint16(p)<<8 | uint16(s), gen: func(r *rand.Rand) []byte { return decimalBytes(r, p, s) }})
	}
	for fsp := range 7 {
		cols = append(cols, directCol{col: schema.Column{Type: "datetime", FSP: fsp}, tp: mysql.MYSQL_TYPE_DATETIME2, meta: uint16(fsp),
			gen: func(r *rand.Rand) []byte {
				ym := r.Int64N(10000)*13 + r.Int64N(13)
				ymd := ym<<5 | r.Int64N(32)
				hms := r.Int64N(24)<<12 | r.Int64N(60)<<6 | r.Int64N(60)
				v := ymd<<17 | hms
				if r.IntN(6) == 0 {
					v = 0 // the zero datetime
				}
				v += replication.DATETIMEF_INT_OFS
				b := []byte{byte(v >> 32), byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
				usec := r.IntN(1000000)
				switch fsp {
				case 1, 2:
					b = append(b, byte(usec/10000))
				case 3, 4:
					b = append(b, byte(usec/100>>8), byte(usec/100))
				case 5, 6:
					b = append(b, byte(usec>>16), byte(usec>>8), byte(usec))
				}
				return b
			}})
	}
	cols = append(cols, temporalCols()...)
	cols = append(cols, bitCols()...)
	for i := range cols {
		cols[i].col.Name = fmt.Sprint("c", i)
		cols[i].col.Nullable = i > 0
	}
	return cols
}

// goMySQLImage decodes one row image with go-mysql as capture configures
// it (no signedness metadata) and encodes it with types.
func goMySQLImage(tm *replication.TableMapEvent, row []byte) ([]any, error) {
	all := bytes.Repeat([]byte{0xFF}, (len(tm.ColumnType)+7)/8)
	re := &replication.RowsEvent{Table: tm, ColumnCount: uint64(len(tm.ColumnType)), ColumnBitmap1: all}
	if err := re.DecodeData(0, row); err != nil {
		return nil, err
	}
	if len(re.Rows) != 1 {
		return nil, fmt.Errorf("%d rows decoded", len(re.Rows))
	}
	return re.Rows[0], nil
}

// TestDirectRowsMatchGoMySQL: the direct decoding of row images gives the
// bytes go-mysql's decoding and rowimage's encoding give, for every column type
// it takes (signed and unsigned integers at their extremes, FLOAT -0,
// DECIMAL of many precisions, zero dates and datetimes of every FSP,
// CHAR/VARCHAR/TEXT in utf8mb4 and latin1 with invalid UTF-8, BINARY(n)
// with its trailing 0x00 stripped, blobs, MariaDB JSON as LONGTEXT, ENUM,
// SET of 64 members all set, TIMESTAMP and TIME of every FSP with zero,
// negative and extreme values, BIT(1..64) with all ones, NULLs): images, keys, an update's delta
// image, and which values fail.
func TestDirectRowsMatchGoMySQL(t *testing.T) {
	// go-mysql formats a TIMESTAMP in the parser's location, which a
	// RowsEvent built outside a parser lacks: it then uses time.Local, so
	// the test sets it to capture's location, UTC.
	local := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = local })
	cols := directCols()
	def := &schema.Table{Schema: "s", Name: "t", Key: []string{"c0"}, KeyKind: schema.KeyPrimary}
	tm := &replication.TableMapEvent{Schema: []byte("s"), Table: []byte("t")}
	for _, c := range cols {
		def.Columns = append(def.Columns, c.col)
		tm.ColumnType = append(tm.ColumnType, c.tp)
		tm.ColumnMeta = append(tm.ColumnMeta, c.meta)
		if _, _, ok := directType(c.tp, c.meta); !ok {
			t.Fatalf("column %s (%s): not decoded directly", c.col.Name, c.col.Type)
		}
	}
	tm.ColumnCount = uint64(len(cols))
	r := rand.New(rand.NewPCG(1, 2))
	// row builds one row image: the null bitmap, then each non-NULL value;
	// with base, a column keeps base's value half of the time.
	row := func(base [][]byte) ([]byte, [][]byte) {
		vals := make([][]byte, len(cols))
		nulls := make([]byte, (len(cols)+7)/8)
		for j, c := range cols {
			switch {
			case base != nil && r.IntN(2) == 0:
				vals[j] = base[j]
			case j > 0 && r.IntN(8) == 0:
				vals[j] = nil
			default:
				vals[j] = c.gen(r)
			}
			if vals[j] == nil {
				nulls[j/8] |= 1 << (j % 8)
			}
		}
		out := nulls
		for _, v := range vals {
			out = append(out, v...)
		}
		return out, vals
	}
	d := &decoder{}
	var failed, checked int
	for range 20000 {
		before, vals := row(nil)
		after, _ := row(vals)
		imgs, rows, ok := decodeBoth(t, tm, def, [2][]byte{before, after})
		if !ok {
			failed++
			continue
		}
		checkDelta(t, d, tm, def, &imgs, rows, "delta")
		checked++
	}
	if checked < 1000 || failed < 100 {
		t.Fatalf("%d rows compared, %d failed in both: the generator misses a side", checked, failed)
	}
}

// decodeBoth decodes each of datas (a before and an after image) directly
// and through go-mysql, and fails t where the two differ: one refusing
// what the other takes, the bytes taken, the image's text, its key. ok is
// false when both refused an image (the direct error naming the table);
// the images after it are not decoded.
func decodeBoth(t *testing.T, tm *replication.TableMapEvent, def *schema.Table, datas [2][]byte) (imgs [2]rowImage, rows [2][]any, ok bool) {
	t.Helper()
	for i, data := range datas {
		goRow, goErr := goMySQLImage(tm, data)
		var want []byte
		if goErr == nil {
			want, goErr = rowimage.AppendValues(nil, def, goRow)
		}
		n, err := decodeImage(&imgs[i], def, tm, data, 0)
		if (err == nil) != (goErr == nil) {
			t.Fatalf("image %x: direct error %v, go-mysql error %v", data, err, goErr)
		}
		if err != nil {
			if !strings.Contains(err.Error(), def.QualifiedName()) {
				t.Fatalf("error %q does not name the table", err)
			}
			return imgs, rows, false
		}
		if n != len(data) {
			t.Fatalf("image %x: took %d bytes of %d", data, n, len(data))
		}
		if !bytes.Equal(imgs[i].text, want) {
			t.Fatalf("image %x:\n direct   %s\n go-mysql %s", data, imgs[i].text, want)
		}
		wantKey, err := rowimage.Key(def, goRow)
		if err != nil {
			t.Fatal(err)
		}
		if key, err := rowimage.KeyOfValues(def, imgs[i].value); err != nil || key != wantKey {
			t.Fatalf("key %q (%v), want %q", key, err, wantKey)
		}
		rows[i] = goRow
	}
	return imgs, rows, true
}

// checkDelta fails t, saying what, when the direct delta of the images
// (before, after) differs from go-mysql's of their rows.
func checkDelta(t *testing.T, d *decoder, tm *replication.TableMapEvent, def *schema.Table, imgs *[2]rowImage, rows [2][]any, what string) {
	t.Helper()
	want, err := rowimage.AppendValuesDelta(nil, def, rows[1], rows[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := d.delta(tm, &imgs[0], &imgs[1]); !bytes.Equal(got, want) {
		t.Fatalf("%s:\n direct   %s\n go-mysql %s", what, got, want)
	}
}
