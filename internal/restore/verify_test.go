package restore

import (
	"fmt"
	"testing"

	"github.com/dbtrail/dbtrail/internal/schema"
)

// TestPartConditions: the key ranges of an integer primary key become
// conditions that follow each other; any other key, or one part, is
// fingerprinted whole.
func TestPartConditions(t *testing.T) {
	parts := []Part{{To: `["10","2"]`}, {From: `["10","2"]`, To: `["20","0"]`}, {From: `["20","0"]`}}
	if err := checkPartsCover(parts); err != nil {
		t.Fatal(err)
	}
	def := &schema.Table{Name: "t", KeyKind: schema.KeyPrimary, Key: []string{"a", "b"}, Columns: []schema.Column{
		{Name: "a", Type: "bigint"}, {Name: "x", Type: "varchar"}, {Name: "b", Type: "int"}}}
	w, ok := partConditions(def, parts)
	if !ok || len(w) != 3 {
		t.Fatalf("integer key: %v, %v", w, ok)
	}
	got := fmt.Sprint(w[0].SQL, w[0].Args, "|", w[1].SQL, w[1].Args, "|", w[2].SQL, w[2].Args)
	want := "(`a`,`b`) < (?,?)[10 2]|(`a`,`b`) >= (?,?) AND (`a`,`b`) < (?,?)[10 2 20 0]|(`a`,`b`) >= (?,?)[20 0]"
	if got != want {
		t.Errorf("conditions\n got %s\nwant %s", got, want)
	}
	if _, ok := partConditions(def, parts[:1]); ok {
		t.Error("one part split")
	}
	text := &schema.Table{Name: "t", KeyKind: schema.KeyPrimary, Key: []string{"x"}, Columns: []schema.Column{{Name: "x", Type: "varchar"}}}
	if _, ok := partConditions(text, []Part{{To: `["m"]`}, {From: `["m"]`}}); ok {
		t.Error("a text key (the server's collation may order it otherwise) split")
	}
	unique := &schema.Table{Name: "t", KeyKind: schema.KeyUnique, Key: []string{"a"}, Columns: []schema.Column{{Name: "a", Type: "int", Nullable: true}}}
	if _, ok := partConditions(unique, []Part{{To: `["5"]`}, {From: `["5"]`}}); ok {
		t.Error("a unique key (NULLs in no range) split")
	}
	if err := checkPartsCover([]Part{{To: `["5"]`}, {From: `["6"]`}}); err == nil {
		t.Error("a gap between parts accepted")
	}
}
