package rowimage

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// sampleTable is a typical 10-column table.
func sampleTable() *schema.Table {
	return &schema.Table{
		Schema: "shop", Name: "orders",
		Columns: []schema.Column{
			{Name: "id", Type: "bigint", Unsigned: true},
			{Name: "customer_id", Type: "int"},
			{Name: "status", Type: "enum", Elems: []string{"new", "paid", "shipped"}},
			{Name: "email", Type: "varchar", Length: 255, Charset: "utf8mb4", Nullable: true},
			{Name: "total", Type: "decimal", Precision: 12, Scale: 2},
			{Name: "created_at", Type: "datetime", FSP: 6},
			{Name: "updated_at", Type: "timestamp"},
			{Name: "flags", Type: "tinyint", Unsigned: true},
			{Name: "weight", Type: "double", Nullable: true},
			{Name: "note", Type: "text", Charset: "utf8mb4", Nullable: true},
		},
		Key: []string{"id"}, KeyKind: schema.KeyPrimary,
	}
}

func sampleRow() []any {
	return []any{
		uint64(18446744073709551615), int32(-7), int64(2), "ann@example.com", "1234.50",
		"2026-11-29 08:00:00.123456", "2026-11-29 08:00:01", int8(-1), 2.5, []byte("line1\nline \"2\""),
	}
}

const sampleImage = `{"id":18446744073709551615,"customer_id":-7,"status":"paid","email":"ann@example.com",` +
	`"total":"1234.50","created_at":"2026-11-29 08:00:00.123456","updated_at":"2026-11-29 08:00:01",` +
	`"flags":255,"weight":2.5,"note":"line1\nline \"2\""}`

func TestImage(t *testing.T) {
	tb := sampleTable()
	img, err := Image(tb, sampleRow())
	if err != nil {
		t.Fatal(err)
	}
	if string(img) != sampleImage {
		t.Fatalf("Image =\n%s\nwant\n%s", img, sampleImage)
	}
	if !json.Valid(img) {
		t.Fatal("image is not valid JSON")
	}
	sqlRow := [][]byte{[]byte("18446744073709551615"), []byte("-7"), []byte("paid"), []byte("ann@example.com"),
		[]byte("1234.50"), []byte("2026-11-29 08:00:00.123456"), []byte("2026-11-29 08:00:01"), []byte("255"),
		[]byte("2.5"), []byte("line1\nline \"2\"")}
	simg, err := SQLImage(tb, RawCells(nil, sqlRow))
	if err != nil || string(simg) != sampleImage {
		t.Fatalf("SQLImage = %s, %v", simg, err)
	}

	fields, err := DecodeImage(img)
	if err != nil {
		t.Fatal(err)
	}
	if len(fields) != len(tb.Columns) {
		t.Fatalf("%d fields", len(fields))
	}
	for i, f := range fields {
		want, _ := AppendValue(nil, &tb.Columns[i], sampleRow()[i])
		if f.Name != tb.Columns[i].Name || string(f.Raw) != string(want) {
			t.Errorf("field %d = %s:%s, want %s:%s", i, f.Name, f.Raw, tb.Columns[i].Name, want)
		}
	}
}

func TestImageNullsAndErrors(t *testing.T) {
	tb := sampleTable()
	row := sampleRow()
	row[3], row[8], row[9] = nil, nil, nil
	img, err := Image(tb, row)
	if err != nil || !strings.Contains(string(img), `"email":null`) || !strings.Contains(string(img), `"note":null}`) {
		t.Fatalf("Image with NULLs = %s, %v", img, err)
	}
	row[9] = []byte("bad \xff")
	_, err = Image(tb, row)
	var ve *ValueError
	if !errors.As(err, &ve) || ve.Table != "shop.orders" || ve.Column != "note" ||
		!strings.HasPrefix(err.Error(), "column shop.orders.note (text): invalid UTF-8") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Image(tb, row[:3]); err == nil || !strings.Contains(err.Error(), "shop.orders: row has 3 values for 10 columns") {
		t.Fatalf("short row: %v", err)
	}
	if _, err := SQLImage(tb, []Cell{NullCell()}); err == nil {
		t.Fatal("short SQL row accepted")
	}
	sqlRow := make([]Cell, 10)
	sqlRow[0] = TextCell([]byte("x"))
	if _, err := SQLImage(tb, sqlRow); err == nil || !strings.HasPrefix(err.Error(), "column shop.orders.id (bigint): ") {
		t.Fatalf("SQLImage err = %v", err)
	}
}

func TestImageEscapesNames(t *testing.T) {
	tb := &schema.Table{Schema: "s", Name: "t", Columns: []schema.Column{
		{Name: `we"ird\name`, Type: "int"}, {Name: "ünï", Type: "int"},
	}, Key: []string{"ünï"}, KeyKind: schema.KeyUnique}
	img, err := Image(tb, []any{int32(1), int32(2)})
	if err != nil || string(img) != `{"we\"ird\\name":1,"ünï":2}` {
		t.Fatalf("Image = %s, %v", img, err)
	}
	f, err := DecodeImage(img)
	if err != nil || f[0].Name != `we"ird\name` || f[1].Name != "ünï" {
		t.Fatalf("DecodeImage = %+v, %v", f, err)
	}
	k, err := KeyFromImage(tb, img)
	if err != nil || k != "[2]" {
		t.Fatalf("KeyFromImage = %s, %v", k, err)
	}
	bad := &schema.Table{Schema: "s", Name: "t", Columns: []schema.Column{{Name: "\xff", Type: "int"}}}
	if _, err := Image(bad, []any{int32(1)}); err == nil {
		t.Fatal("non-UTF-8 column name accepted")
	}
}

func TestKey(t *testing.T) {
	tb := sampleTable()
	k, err := Key(tb, sampleRow())
	if err != nil || k != "[18446744073709551615]" {
		t.Fatalf("Key = %s, %v", k, err)
	}
	img, _ := Image(tb, sampleRow())
	if k2, err := KeyFromImage(tb, img); err != nil || k2 != k {
		t.Fatalf("KeyFromImage = %s, %v", k2, err)
	}

	comp := sampleTable()
	comp.Key = []string{"CUSTOMER_ID", "email"} // names match case-insensitively
	comp.KeyKind = schema.KeyUnique
	k, err = Key(comp, sampleRow())
	if err != nil || k != `[-7,"ann@example.com"]` {
		t.Fatalf("composite Key = %s, %v", k, err)
	}
	if k2, err := KeyFromImage(comp, img); err != nil || k2 != k {
		t.Fatalf("composite KeyFromImage = %s, %v", k2, err)
	}

	row := sampleRow()
	row[3] = nil
	if _, err := Key(comp, row); err == nil || !strings.Contains(err.Error(), "column shop.orders.email (varchar): key column is NULL") {
		t.Fatalf("NULL unique key: %v", err)
	}
	nimg, _ := Image(comp, row)
	if _, err := KeyFromImage(comp, nimg); err == nil {
		t.Fatal("KeyFromImage accepted a NULL key")
	}

	rowKey := sampleTable()
	rowKey.KeyKind = schema.KeyRow
	rowKey.Key = rowKey.ColumnNames()
	k, err = Key(rowKey, row)
	if err != nil || !strings.HasPrefix(k, `[18446744073709551615,-7,"paid",null,`) {
		t.Fatalf("KeyRow Key = %s, %v", k, err)
	}
	if k2, err := KeyFromImage(rowKey, nimg); err != nil || k2 != k {
		t.Fatalf("KeyRow KeyFromImage = %s, %v (Key %s)", k2, err, k)
	}
	rowKey.Key = nil // an empty KeyRow key means every column
	if k3, err := Key(rowKey, row); err != nil || k3 != k {
		t.Fatalf("empty KeyRow key = %s, %v", k3, err)
	}
	if k3, err := KeyFromImage(rowKey, nimg); err != nil || k3 != k {
		t.Fatalf("empty KeyRow KeyFromImage = %s, %v", k3, err)
	}

	noKey := sampleTable()
	noKey.Key = nil
	if _, err := Key(noKey, sampleRow()); err == nil {
		t.Fatal("primary table without key columns accepted")
	}
	missing := sampleTable()
	missing.Key = []string{"nope"}
	if _, err := Key(missing, sampleRow()); err == nil {
		t.Fatal("unknown key column accepted")
	}
	if _, err := KeyFromImage(missing, img); err == nil {
		t.Fatal("KeyFromImage: unknown key column accepted")
	}
	if _, err := Key(tb, sampleRow()[:2]); err == nil {
		t.Fatal("short row accepted")
	}
	bad := sampleRow()
	bad[0] = "1"
	if _, err := Key(tb, bad); !errors.Is(err, ErrUnexpectedType) || !strings.Contains(err.Error(), "shop.orders.id") {
		t.Fatalf("Key type error = %v", err)
	}
}

func TestDecodeImage(t *testing.T) {
	f, err := DecodeImage([]byte(" { \"a\" : 1 , \"b\":[1, {\"x\": null}], \"c\": \"\\u00e9\\n\", \"d\":-1.5e+3, \"e\":true } "))
	if err != nil {
		t.Fatal(err)
	}
	want := []Field{{"a", []byte("1")}, {"b", []byte(`[1, {"x": null}]`)}, {"c", []byte(`"\u00e9\n"`)},
		{"d", []byte("-1.5e+3")}, {"e", []byte("true")}}
	if len(f) != len(want) {
		t.Fatalf("got %d fields", len(f))
	}
	for i := range want {
		if f[i].Name != want[i].Name || string(f[i].Raw) != string(want[i].Raw) {
			t.Errorf("field %d = %s:%s, want %s:%s", i, f[i].Name, f[i].Raw, want[i].Name, want[i].Raw)
		}
	}
	if f, err := DecodeImage([]byte("{}")); err != nil || len(f) != 0 {
		t.Fatalf("empty object: %v %v", f, err)
	}
	for _, bad := range []string{
		"", "[]", "{", `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1} x`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`,
		`{"a":-}`, `{"a":1e}`, `{"a":tru}`, `{"a":"x}`, "{\"a\":\"\x01\"}", `{"a":"\x"}`, `{"a":"\u12"}`,
		"{\"a\":\"\xff\"}", `{1:2}`, `{"a":[1 2]}`, `{"a":{"b"}}`, `{"a":+1}`, `{"a":NaN}`,
		"{\"a\":" + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "}",
	} {
		if _, err := DecodeImage([]byte(bad)); err == nil {
			t.Errorf("DecodeImage(%q) accepted", bad)
		}
	}
}
