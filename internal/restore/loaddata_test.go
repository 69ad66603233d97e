package restore

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// loadDataTable has a column of every class of rowimage.ClassOf.
func loadDataTable() *schema.Table {
	return &schema.Table{Schema: "app", Name: "all", Columns: []schema.Column{
		{Name: "i", Type: "int"},
		{Name: "u", Type: "bigint", Unsigned: true},
		{Name: "y", Type: "year"},
		{Name: "d", Type: "decimal", Precision: 12, Scale: 2},
		{Name: "f", Type: "float"},
		{Name: "e", Type: "double"},
		{Name: "t", Type: "datetime", FSP: 6},
		{Name: "s", Type: "varchar", Length: 50, Charset: "utf8mb4"},
		{Name: "l", Type: "varchar", Length: 50, Charset: "latin1"},
		{Name: "en", Type: "enum", Elems: []string{"a", "b"}},
		{Name: "b", Type: "varbinary", Length: 20},
		{Name: "bit", Type: "bit", Length: 12},
		{Name: "g", Type: "geometry"},
		{Name: "cb", Type: "varchar", Length: 10, Charset: "binary"},
		{Name: "uu", Type: "uuid"},
		{Name: "we`ird", Type: "text", Charset: "utf8mb4"},
	}}
}

func cell(s string) rowimage.Cell { return rowimage.Cell{Text: []byte(s)} }

// unescapeLoadData reads one line as LOAD DATA does with FIELDS
// TERMINATED BY '\t' ESCAPED BY '\\' LINES TERMINATED BY '\n': the
// reference the encoding must round-trip through.
func unescapeLoadData(t *testing.T, line []byte) []rowimage.Cell {
	t.Helper()
	var out []rowimage.Cell
	var cur []byte
	escaped := false
	flush := func() {
		if string(cur) == "\x00NULL" {
			out = append(out, rowimage.Cell{Null: true})
		} else {
			out = append(out, rowimage.Cell{Text: append([]byte{}, cur...)})
		}
		cur = cur[:0]
	}
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case escaped:
			escaped = false
			switch ch {
			case '0':
				cur = append(cur, 0)
			case 'n':
				cur = append(cur, '\n')
			case 'r':
				cur = append(cur, '\r')
			case 't':
				cur = append(cur, '\t')
			case 'Z':
				cur = append(cur, 0x1a)
			case 'b':
				cur = append(cur, '\b')
			case 'N':
				if len(cur) != 0 || (i+1 < len(line) && line[i+1] != '\t' && line[i+1] != '\n') {
					t.Fatalf("\\N inside a field: %q", line)
				}
				cur = append(cur, "\x00NULL"...)
			default:
				cur = append(cur, ch)
			}
		case ch == '\\':
			escaped = true
		case ch == '\t':
			flush()
		case ch == '\n':
			flush()
			if i != len(line)-1 {
				t.Fatalf("a row spans lines: %q", line)
			}
			return out
		default:
			cur = append(cur, ch)
		}
	}
	t.Fatalf("line without its end: %q", line)
	return nil
}

func TestLoadDataStatement(t *testing.T) {
	d, err := NewLoadData(loadDataTable())
	if err != nil {
		t.Fatal(err)
	}
	got := d.Statement("restored", "all", "Reader::x'1")
	want := "LOAD DATA LOCAL INFILE 'Reader::x''1' INTO TABLE `restored`.`all` CHARACTER SET utf8mb4" +
		` FIELDS TERMINATED BY '\t' ENCLOSED BY '' ESCAPED BY '\\' LINES TERMINATED BY '\n' STARTING BY ''` +
		" (`i`,`u`,@v2,`d`,`f`,`e`,`t`,`s`,`l`,`en`,@v10,@v11,@v12,@v13,`uu`,`we``ird`)" +
		" SET `y` = CAST(@v2 AS SIGNED), `b` = UNHEX(@v10), `bit` = UNHEX(@v11), `g` = UNHEX(@v12), `cb` = UNHEX(@v13)"
	if got != want {
		t.Fatalf("statement\n got %s\nwant %s", got, want)
	}
}

func TestLoadDataRowsRoundTrip(t *testing.T) {
	d, err := NewLoadData(loadDataTable())
	if err != nil {
		t.Fatal(err)
	}
	nasty := "tab\there\nnew\rcr\\back\x00nul\x1az 'q' \"dq\" \\N é😀"
	rows := [][]rowimage.Cell{
		{cell("-2147483648"), cell("18446744073709551615"), cell("0"), cell("-1234567890.12"), cell("-0"), cell("1.7976931348623157e+308"),
			cell("0000-00-00 00:00:00.000000"), cell(nasty), cell("café"), cell("b"), cell("\x00\t\n\\\xff"), cell("\x0f\xff"),
			cell("\x00\x00\x00\x00\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\xf0?\x00\x00\x00\x00\x00\x00\x00@"), cell(""), cell("123e4567-e89b-12d3-a456-426655440000"), cell("\\N")},
		{{Null: true}, {Null: true}, {Null: true}, {Null: true}, {Null: true}, {Null: true}, {Null: true}, {Null: true},
			cell(""), {Null: true}, cell(""), {Null: true}, {Null: true}, {Null: true}, {Null: true}, cell("N")},
		{cell("7"), cell("0"), cell("2026"), cell("0.00"), cell("3.4028235e+38"), cell("5e-324"),
			cell("2026-11-29 08:00:00.123456"), cell(""), cell(" "), cell(""), cell("\\"), cell("\x00"), cell("\x01"), cell("\t"), cell("00000000-0000-0000-0000-000000000000"), cell("\\\\t")},
	}
	var buf []byte
	for i, r := range rows {
		if buf, err = d.AppendRow(buf, int64(i+1), r); err != nil {
			t.Fatal(err)
		}
	}
	lines := bytes.SplitAfter(buf, []byte("\n"))
	if len(lines) != len(rows)+1 || len(lines[len(rows)]) != 0 {
		t.Fatalf("%d lines for %d rows: %q", len(lines)-1, len(rows), buf)
	}
	for i, r := range rows {
		got := unescapeLoadData(t, lines[i])
		if len(got) != len(r) {
			t.Fatalf("row %d: %d fields, want %d: %q", i+1, len(got), len(r), lines[i])
		}
		for j, c := range r {
			want := c
			if !c.Null && d.kinds[j] == loadHex {
				want = cell(hexText(c.Text))
			}
			if got[j].Null != want.Null || !bytes.Equal(got[j].Text, want.Text) {
				t.Fatalf("row %d column %s: got %+q (null %v), want %+q (null %v)", i+1, d.t.Columns[j].Name, got[j].Text, got[j].Null, want.Text, want.Null)
			}
		}
	}
}

func hexText(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		s.WriteByte(hexDigits[c>>4])
		s.WriteByte(hexDigits[c&15])
	}
	return s.String()
}

func TestLoadDataRefusesBadNumbers(t *testing.T) {
	d, err := NewLoadData(loadDataTable())
	if err != nil {
		t.Fatal(err)
	}
	row := make([]rowimage.Cell, len(d.kinds))
	for i := range row {
		row[i] = rowimage.Cell{Null: true}
	}
	for _, c := range []struct {
		col int
		v   string
	}{{0, "1\t2"}, {0, ""}, {2, "20.5"}, {3, "1,5"}, {5, "nan"}, {1, "0x10"}} {
		r := append([]rowimage.Cell(nil), row...)
		r[c.col] = cell(c.v)
		if _, err := d.AppendRow(nil, 9, r); err == nil || !strings.Contains(err.Error(), "row 9 column "+d.t.Columns[c.col].Name) {
			t.Fatalf("column %d value %q: err %v", c.col, c.v, err)
		}
	}
	if _, err := d.AppendRow(nil, 1, row[:3]); err == nil {
		t.Fatal("a short row loads")
	}
	if _, err := NewLoadData(&schema.Table{Schema: "a", Name: "b", Columns: []schema.Column{{Name: "x", Type: "nosuchtype"}}}); err == nil {
		t.Fatal("an unsupported type is accepted")
	}
}
