package fold

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// TestRewriteKeylessTableKeepsDuplicates: a table without a key holds the
// same row several times; deletes and updates of one copy remove exactly one
// copy, over many rewrites.
func TestRewriteKeylessTableKeepsDuplicates(t *testing.T) {
	ctx := context.Background()
	def := parseTable(t, "CREATE TABLE `logs` (`a` int DEFAULT NULL, `b` varchar(5) DEFAULT NULL);", "logs")
	if def.KeyKind != schema.KeyRow || !snapshot.FullOnly(def) {
		t.Fatalf("key %s %v", def.KeyKind, def.Key)
	}
	e, err := Open(ctx, Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r := rand.New(rand.NewPCG(3, 3))
	img := func() []byte {
		b := "null"
		if r.IntN(3) > 0 {
			b = fmt.Sprintf("%q", fmt.Sprint("v", r.IntN(3)))
		}
		return fmt.Appendf(nil, `{"a":%d,"b":%s}`, r.IntN(4), b)
	}
	model := map[string]int{} // image → copies
	var rows [][]byte
	for range 40 {
		im := img()
		model[string(im)]++
		rows = append(rows, im)
	}
	store := t.TempDir()
	file := filepath.Join(store, "g0.parquet")
	writeFile(t, file, func(w io.Writer) error {
		tw, err := snapshot.NewTableWriter(w, def, snapshot.FooterMeta{}, snapshot.WriterOptions{})
		if err != nil {
			return err
		}
		for _, im := range rows {
			if err := tw.AppendImage(im); err != nil {
				return err
			}
		}
		_, err = tw.Close()
		return err
	})
	key := func(im []byte) string {
		k, err := rowimage.KeyFromImage(def, im)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	present := func() []string {
		var ks []string
		for k, n := range model {
			for range n {
				ks = append(ks, k)
			}
		}
		slices.Sort(ks)
		return ks
	}
	seq := uint64(0)
	for step := 1; step <= 15; step++ {
		var evs []change.Event
		for range 1 + r.IntN(12) {
			seq++
			ev := change.Event{Seq: seq, Schema: "db", Table: "logs"}
			p := present()
			switch op := r.IntN(3); {
			case op == 0 || len(p) == 0:
				im := img()
				ev.Op, ev.PK, ev.After = change.OpInsert, key(im), im
				model[string(im)]++
			case op == 1:
				old := []byte(p[r.IntN(len(p))])
				ev.Op, ev.PK, ev.Before = change.OpDelete, key(old), old
				model[string(old)]--
			default:
				old := []byte(p[r.IntN(len(p))])
				im := img()
				if string(im) == string(old) {
					continue
				}
				ev.Op, ev.PK, ev.PKBefore, ev.Before, ev.After = change.OpUpdate, key(im), key(old), old, im
				model[string(old)]--
				model[string(im)]++
			}
			evs = append(evs, ev)
		}
		w, err := e.WriteWindow(def, fmt.Sprintf("k%d", step), eventsOf(evs))
		if err != nil {
			t.Fatal(err)
		}
		next := filepath.Join(store, fmt.Sprintf("g%d.parquet", step))
		writeFile(t, next, func(out io.Writer) error {
			_, err := e.Rewrite(ctx, RewriteInput{Table: def, TableFile: file, Window: w}, out, nil)
			return err
		})
		checkRowsAt(t, e, RewriteInput{Table: def, TableFile: file, Window: w}, next)
		w.Remove()
		file = next
		var got []string
		if err := e.Rows(ctx, TableAt{Table: def, TableFile: file}, func(row []rowimage.Cell) error {
			im, err := rowimage.SQLImage(def, row)
			got = append(got, normJSON(t, im))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, k := range present() {
			want = append(want, normJSON(t, []byte(k)))
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("step %d: %d rows, want %d\n%s", step, len(got), len(want), diff(got, want))
		}
	}
}
