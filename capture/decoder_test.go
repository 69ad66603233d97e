package capture

import (
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
)

// TestDecoderImageArena: images carved from the shared buffer equal
// rowimage.Image, stay intact while later images (small, and larger than the
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
		img, err := d.image(newResolved(tb, 1), row, nil)
		if err != nil {
			t.Fatal(err)
		}
		w, err := rowimage.AppendValues(nil, tb, row)
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

// TestDecoderImageAllocations: images larger than the column-count guess of
// free space must not regrow or copy the shared buffer (that made a
// 200k-row transaction of 500-byte rows take minutes).
func TestDecoderImageAllocations(t *testing.T) {
	tb := &schema.Table{Schema: "s", Name: "t", Columns: []schema.Column{
		{Name: "id", Type: "int"}, {Name: "v", Type: "varchar", Charset: "utf8mb4", Length: 1000},
	}, Key: []string{"id"}, KeyKind: schema.KeyPrimary}
	d := &decoder{}
	row := []any{int32(1), strings.Repeat("v", 600)}
	rt := newResolved(tb, 1)
	allocs := testing.AllocsPerRun(5000, func() {
		if _, err := d.image(rt, row, nil); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0.01 {
		t.Fatalf("%.3f allocations per image, want about one buffer per %d images", allocs, arenaBlock/620)
	}
}
