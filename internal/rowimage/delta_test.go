package rowimage

import (
	"testing"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// TestAppendValuesDelta: values equal to the before image's and longer
// than the marker become the marker; everything else is written whole.
func TestAppendValuesDelta(t *testing.T) {
	tb := &schema.Table{Schema: "s", Name: "t", Columns: []schema.Column{
		{Name: "id", Type: "int"}, {Name: "a", Type: "varchar", Charset: "utf8mb4", Length: 100},
		{Name: "b", Type: "varbinary", Length: 100}, {Name: "n", Type: "bigint"}, {Name: "z", Type: "varchar", Charset: "utf8mb4", Length: 10},
		{Name: "d", Type: "double"},
	}, Key: []string{"id"}, KeyKind: schema.KeyPrimary}
	before := []any{int32(7), "same text", []byte("bytes"), int64(123456), nil, 2.5}
	after := []any{int32(7), "same text", []byte("bytes"), int64(123457), nil, 2.5}
	got, err := AppendValuesDelta(nil, tb, after, before)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[7,{},{},123457,{},{}]`; string(got) != want {
		t.Fatalf("delta %s, want %s", got, want)
	}
	full, _ := AppendValues(nil, tb, after)
	if want := `[7,"same text","Ynl0ZXM=",123457,null,2.5]`; string(full) != want {
		t.Fatalf("values %s, want %s", full, want)
	}
	// Other dynamic types, or types it cannot compare, are never taken as equal.
	if sameValue(int32(1), int64(1)) || sameValue([]byte("a"), "a") || sameValue(struct{ p *int }{}, struct{ p *int }{}) {
		t.Fatal("sameValue took values of other types as equal")
	}
	if _, err := AppendValuesDelta(nil, tb, after, before[:2]); err == nil {
		t.Fatal("a before row of another width was accepted")
	}
	cols, err := ColumnList(tb)
	if err != nil || string(cols) != `["id","a","b","n","z","d"]` {
		t.Fatalf("column list %s %v", cols, err)
	}
}
