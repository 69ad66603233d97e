package fold

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/snapshot"
)

// TestFoldModel drives random windows through pairs, compactions and
// rewrites and checks after every step that the DuckDB views read exactly
// the model's rows, and that a rewrite's fingerprint is the one a full
// write of the model has.
func TestFoldModel(t *testing.T) {
	ctx := context.Background()
	e, err := Open(ctx, Options{TempDir: t.TempDir(), MemoryLimit: "128MB", KeyMapDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, mk := range []func(*testing.T) *modelTable{intTable, compositeTable} {
		m := mk(t)
		t.Run(m.def.Name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, uint64(len(m.def.Name))))
			store := t.TempDir()
			nextID, seq := 0, uint64(0)
			m.window(t, r, 150, &nextID, &seq) // initial rows, not a window
			gen := 0
			st := startChain(t, store, m, gen)
			checkViews(t, db, m, st, "start")
			var pairs, rewrites, compactions int
			for step := 1; step <= 40; step++ {
				evs := m.window(t, r, r.IntN(30), &nextID, &seq)
				w, err := e.WriteWindow(m.def, fmt.Sprintf("w%d", step), eventsOf(evs))
				if err != nil {
					t.Fatal(err)
				}
				checkTailViews(t, db, m, st, w, fmt.Sprintf("step %d tail", step))
				checkTailViews(t, db, m, st, w, fmt.Sprintf("step %d tail in segments", step), segments(t, e, m, evs, step)...)
				switch {
				case step%9 == 0:
					st = rewrite(t, e, m, st, w, store, &gen)
					rewrites++
				default:
					st = pair(t, e, m, st, w, store)
					pairs++
				}
				w.Remove()
				checkViews(t, db, m, st, fmt.Sprintf("step %d", step))
				checkRows(t, e, m, st, fmt.Sprintf("step %d", step))
				if len(st.chain) >= 5 {
					st = compact(t, e, m, st, store)
					compactions++
					checkViews(t, db, m, st, fmt.Sprintf("step %d compacted", step))
				}
			}
			t.Logf("%d pairs, %d rewrites, %d compactions, %d rows at the end", pairs, rewrites, compactions, len(m.rows))
		})
	}
}

func pair(t *testing.T, e *Engine, m *modelTable, st tableState, w *Window, store string) tableState {
	t.Helper()
	n := 0
	for _, c := range st.chain {
		_, to, _ := strings.Cut(c.name, "-")
		if to == "" {
			to = c.name
		}
		var v int
		fmt.Sscanf(to, "%d", &v)
		n = v + 1
	}
	name := fmt.Sprintf("%06d", n)
	ce := chainEntry{name: name,
		posdel:  filepath.Join(store, fmt.Sprintf("%s.%s.%d.posdel", m.def.Name, name, len(st.chain))),
		upserts: filepath.Join(store, fmt.Sprintf("%s.%s.%d.upserts", m.def.Name, name, len(st.chain)))}
	pf, err := os.Create(ce.posdel)
	if err != nil {
		t.Fatal(err)
	}
	uf, err := os.Create(ce.upserts)
	if err != nil {
		t.Fatal(err)
	}
	// Every other pair finds its stale rows through the key map, the
	// others by the DuckDB join.
	tf := TableFile{Path: st.file}
	if len(st.chain)%2 == 0 {
		tf.SHA256 = fileSHA(t, st.file)
	}
	res, err := e.WritePair(context.Background(), w, tf, snapshot.FooterMeta{}, pf, uf, nil)
	if err != nil {
		t.Fatal(err)
	}
	pf.Close()
	uf.Close()
	if tf.SHA256 != "" {
		if _, err := os.Stat(e.keyMapPath(tf)); err != nil {
			t.Fatalf("no key map after a pair through it: %v", err)
		}
	}
	// A retry (here through the DuckDB join) writes the same bytes (a retried activity must produce the
	// same snapshot).
	var pd2, up2 bytes.Buffer
	if _, err := e.WritePair(context.Background(), w, TableFile{Path: st.file}, snapshot.FooterMeta{}, &pd2, &up2, nil); err != nil {
		t.Fatal(err)
	}
	for path, again := range map[string][]byte{ce.posdel: pd2.Bytes(), ce.upserts: up2.Bytes()} {
		if first, _ := os.ReadFile(path); !bytes.Equal(first, again) {
			t.Fatalf("%s: a second WritePair of the same window wrote other bytes", path)
		}
	}
	if res.UpsertRows > w.Effects {
		t.Fatalf("pair has %d upserts for %d effects", res.UpsertRows, w.Effects)
	}
	st.chain = append(slices.Clone(st.chain), ce)
	return st
}

func rewrite(t *testing.T, e *Engine, m *modelTable, st tableState, w *Window, store string, gen *int) tableState {
	t.Helper()
	*gen++
	in := RewriteInput{Table: m.def, TableFile: st.file, Window: w}
	for _, c := range st.chain {
		in.Posdel = append(in.Posdel, c.posdel)
		in.Upserts = append(in.Upserts, Upserts(c.upserts))
	}
	out := tableState{file: filepath.Join(store, fmt.Sprintf("%s.g%d.parquet", m.def.Name, *gen))}
	var res snapshot.WriteResult
	writeFile(t, out.file, func(wr io.Writer) error {
		var err error
		res, err = e.Rewrite(context.Background(), in, wr, nil)
		return err
	})
	var again bytes.Buffer
	if _, err := e.Rewrite(context.Background(), in, &again, nil); err != nil {
		t.Fatal(err)
	}
	if first, _ := os.ReadFile(out.file); !bytes.Equal(first, again.Bytes()) {
		t.Fatal("a second Rewrite of the same input wrote other bytes")
	}
	checkRowsAt(t, e, in, out.file)
	// The fingerprint of the model written in full.
	want := m.writeTable(t, filepath.Join(store, "model.parquet"))
	if res.Fingerprint != want.Fingerprint {
		t.Fatalf("rewrite fingerprint %s, model %s", res.Fingerprint, want.Fingerprint)
	}
	out.chain = []chainEntry{emptyPair(t, store, m, *gen)}
	return out
}

func compact(t *testing.T, e *Engine, m *modelTable, st tableState, store string) tableState {
	t.Helper()
	merge := st.chain[:len(st.chain)-1]
	var posdel []string
	var upserts []Keyed
	for _, c := range merge {
		posdel = append(posdel, c.posdel)
		upserts = append(upserts, Upserts(c.upserts))
	}
	last := merge[len(merge)-1].name
	if _, to, ok := strings.Cut(last, "-"); ok {
		last = to
	}
	name := "000000-" + last
	ce := chainEntry{name: name,
		posdel:  filepath.Join(store, fmt.Sprintf("%s.%s.posdel", m.def.Name, name)),
		upserts: filepath.Join(store, fmt.Sprintf("%s.%s.upserts", m.def.Name, name))}
	pf, _ := os.Create(ce.posdel)
	uf, _ := os.Create(ce.upserts)
	if _, err := e.Compact(context.Background(), m.def, posdel, upserts, snapshot.FooterMeta{}, pf, uf, nil); err != nil {
		t.Fatal(err)
	}
	pf.Close()
	uf.Close()
	st.chain = append([]chainEntry{ce}, st.chain[len(st.chain)-1])
	return st
}

// checkRows compares Engine.Rows of st with the model.
func checkRows(t *testing.T, e *Engine, m *modelTable, st tableState, step string) {
	t.Helper()
	at := TableAt{Table: m.def, TableFile: st.file}
	for _, c := range st.chain {
		at.Posdel = append(at.Posdel, c.posdel)
		at.Upserts = append(at.Upserts, Upserts(c.upserts))
	}
	var got []string
	err := e.Rows(context.Background(), at, func(row []rowimage.Cell) error {
		img, err := rowimage.SQLImage(m.def, row)
		if err != nil {
			return err
		}
		got = append(got, normJSON(t, img))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, k := range sortedKeys(m.rows) {
		want = append(want, normJSON(t, m.rows[k]))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: Rows of %s has %d rows, the model %d\n%s", step, m.def.Name, len(got), len(want), diff(got, want))
	}
}

// segments writes evs as a tail cache keeps them: three windows of
// consecutive events, the last two joined (JoinWindowFiles: one row per
// key, checked), and returns the two files in stream order.
func segments(t *testing.T, e *Engine, m *modelTable, evs []change.Event, step int) []string {
	t.Helper()
	a, b := len(evs)/3, 2*len(evs)/3
	var paths []string
	for i, part := range [][]change.Event{evs[:a], evs[a:b], evs[b:]} {
		w, err := e.WriteWindow(m.def, fmt.Sprintf("s%d-%d", step, i), eventsOf(part))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, w.File.Path)
	}
	joined := e.scratchPath(fmt.Sprintf("s%d-joined", step))
	if err := JoinWindowFiles(m.def, joined, paths[1:]); err != nil {
		t.Fatal(err)
	}
	keys := map[string]int{}
	for _, p := range []string{joined} {
		r, err := snapshot.OpenKeyedFile(p, WindowKeyCol, WindowOpCol)
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := r.Next(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			k, _, _ := r.Keyed()
			keys[k]++
		}
		r.Close()
	}
	for k, n := range keys {
		if n != 1 {
			t.Fatalf("step %d: the joined window holds key %s %d times, want its newest effect once", step, k, n)
		}
	}
	return []string{paths[0], joined}
}

// TestJoinWindowFilesRefusesAnotherTable: joining a window of another
// table's columns is an error naming the file, and leaves no file.
func TestJoinWindowFilesRefusesAnotherTable(t *testing.T) {
	ctx := context.Background()
	e, err := Open(ctx, Options{TempDir: t.TempDir(), MemoryLimit: "128MB"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ints, comp := intTable(t), compositeTable(t)
	r := rand.New(rand.NewPCG(3, 4))
	nextID, seq := 0, uint64(0)
	w, err := e.WriteWindow(ints.def, "ints", eventsOf(ints.window(t, r, 5, &nextID, &seq)))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "joined")
	err = JoinWindowFiles(comp.def, out, []string{w.File.Path})
	if err == nil || !strings.Contains(err.Error(), w.File.Path) {
		t.Fatalf("a window of %s joined as %s: %v", ints.def.QualifiedName(), comp.def.QualifiedName(), err)
	}
	if _, serr := os.Stat(out); !os.IsNotExist(serr) {
		t.Fatalf("a failed join left %s: %v", out, serr)
	}
}
