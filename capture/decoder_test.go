package capture

import (
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/types"
)

// TestDecoderImageArena: images carved from the shared buffer equal
// types.Image, stay intact while later images (small, and larger than the
// buffer's free space) are carved, and cannot be appended into each other.
func TestDecoderImageArena(t *testing.T) {
	tb := &schema.Table{Schema: "s", Name: "t", Columns: []schema.Column{
		{Name: "id", Type: "int"}, {Name: "v", Type: "varchar", Charset: "utf8mb4", Length: 1 << 20},
	}, Key: []string{"id"}, KeyKind: schema.KeyPrimary}
	d := &decoder{}
	var got [][]byte
	var want []string
	for i := 0; i < 400; i++ {
		v := strings.Repeat("x", i*37%500)
		if i%50 == 7 {
			v = strings.Repeat("big", arenaBlock/2) // larger than any free space
		}
		row := []any{int32(i), v}
		img, err := d.image(tb, row)
		if err != nil {
			t.Fatal(err)
		}
		w, err := types.Image(tb, row)
		if err != nil {
			t.Fatal(err)
		}
		if cap(img) != len(img) {
			t.Fatalf("image %d has spare capacity %d: an append would write into the next", i, cap(img)-len(img))
		}
		got, want = append(got, img), append(want, string(w))
	}
	for i := range got {
		if string(got[i]) != want[i] {
			t.Fatalf("image %d changed: %.80s, want %.80s", i, got[i], want[i])
		}
	}
}
