package views

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dbtrail/dbtrail/internal/views/viewstest"
)

// TestOverlayFoldsOnlyNewFiles: a session asked at cut after cut of one
// cached window (Window.Spans) reads each new file once into its overlay:
// a new segment, a join of the older segments beside the newest, a last
// segment whose end moved (nothing read), an earlier cut with a file of
// its own (made again from every file), the latest cut after it (made
// again). At every cut each statement answers as a session reading every
// file does (the window without spans), through the view and through the
// base. It fails when an overlay is extended from the wrong file, or made
// again when it could be extended.
func TestOverlayFoldsOnlyNewFiles(t *testing.T) {
	src := filepath.Join(t.TempDir(), "main")
	orders := viewstest.Table{Schema: "shop", Create: "CREATE TABLE orders (id INT PRIMARY KEY, total DECIMAL(8,2), note VARCHAR(20))",
		Rows: [][]any{{"1", "10.50", "first"}, {"2", "3.25", nil}, {"3", "7.00", "new"}}}
	id := viewstest.Publish(t, src, orders)
	file := func(name, rows string) string {
		return writeWindow(t, src, id, "shop", "orders", name, rows).Paths[0]
	}
	f1 := file("f1.parquet", `(2, '4.00', 'two', '[2]', 'u'), (3, '7.00', 'new', '[3]', 'd'), (2, '4.50', 'two b', '[2]', 'u')`)
	f2 := file("f2.parquet", `(2, '5.00', 'two again', '[2]', 'u'), (4, '1.00', 'four', '[4]', 'u')`)
	j := file("j.parquet", `(3, '7.00', 'new', '[3]', 'd'), (2, '5.00', 'two again', '[2]', 'u'), (4, '1.00', 'four', '[4]', 'u')`)
	f3 := file("f3.parquet", `(4, '1.00', 'four', '[4]', 'd'), (3, '8.00', 'back', '[3]', 'u'), (6, '6.00', 'six', '[6]', 'u')`)
	own := file("own.parquet", `(1, '1.00', 'one', '[1]', 'u')`)
	f4 := file("f4.parquet", `(6, '6.00', 'six', '[6]', 'd'), (1, '0.50', 'one b', '[1]', 'u')`)
	const w = "cache window"
	cuts := []struct {
		paths []string
		spans []Span
		reads int // window files the overlay reads at this cut
	}{
		{[]string{f1}, []Span{{w, "c/1", 0, 10}}, 1},
		{[]string{f1, f2}, []Span{{w, "c/1", 0, 10}, {w, "c/2", 10, 20}}, 1},
		{[]string{j, f3}, []Span{{w, "c/j", 0, 20}, {w, "c/3", 20, 30}}, 1},
		{[]string{j, f3}, []Span{{w, "c/j", 0, 20}, {w, "c/3", 20, 35}}, 0},
		{[]string{f1, own}, []Span{{w, "c/1", 0, 10}, {"", "own", 10, 15}}, 2},
		{[]string{j, f3, f4}, []Span{{w, "c/j", 0, 20}, {w, "c/3", 20, 35}, {w, "c/4", 35, 40}}, 3},
		{[]string{j, f3, f4}, []Span{{w, "c/j", 0, 20}, {w, "c/3", 20, 35}, {"other window", "c/4", 35, 40}}, 3},
	}
	at := 0
	open := func(spans bool) *Session {
		return openSession(t, SessionOptions{Options: Options{SourceDir: src, Exact: true}, SharedDir: t.TempDir(), Sandbox: true,
			Tail: func(ctx context.Context, dir string) (*Tail, error) {
				win := writeWindow(t, src, id, "shop", "orders", "scratch.parquet", `(9, '9.00', 'nine', '[9]', 'd')`)
				win.Paths = cuts[at].paths
				if spans {
					win.Spans = cuts[at].spans
				}
				return &Tail{Snapshot: id, Note: "cut: test", Windows: map[string]*Window{"shop.orders": win}, Files: map[string]string{}}, nil
			}})
	}
	s, ref := open(true), open(false)
	queries := []string{"SELECT id, total, note FROM shop.orders ORDER BY id", "SELECT count(*), sum(total) FROM shop.orders"}
	ctx := context.Background()
	for at = range cuts {
		before := s.overlayReads
		if at > 0 {
			for _, x := range []*Session{s, ref} {
				if _, err := x.Reload(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, q := range queries {
			if got, want := queryLines(t, s, q), queryLines(t, ref, q); !slices.Equal(got, want) {
				t.Fatalf("cut %d: %s: %v, reading every file %v", at, q, got, want)
			}
		}
		if got := s.overlayReads - before; at > 0 && got != cuts[at].reads {
			t.Errorf("cut %d: the overlay read %d window files, want %d", at, got, cuts[at].reads)
		}
		base := filepath.Join(s.opt.SharedDir, "orders.duckdb")
		if at == 0 {
			if err := s.WriteBase(ctx, "shop.orders", base); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.UseBase(ctx, "shop.orders", base); err != nil {
			t.Fatal(err)
		}
		if got, want := queryLines(t, s, queries[0]), queryLines(t, ref, queries[0]); !slices.Equal(got, want) {
			t.Fatalf("cut %d through the base: %v, reading every file %v", at, got, want)
		}
	}
	if got := queryLines(t, s, queries[0]); !slices.Equal(got, []string{"1|0.5|one b", "2|5|two again", "3|8|back"}) {
		t.Fatalf("the last cut: %v", got)
	}
}

// TestSessionKeepsOverlaidViews: at each new cut the tables whose overlay
// the session holds (it read them) are staged when the views load, their
// new files folded in, and their views are not made again; a table never
// read stays pending until a statement names it. Every answer is the
// window's at its cut.
func TestSessionKeepsOverlaidViews(t *testing.T) {
	src := filepath.Join(t.TempDir(), "main")
	orders := viewstest.Table{Schema: "shop", Create: "CREATE TABLE orders (id INT PRIMARY KEY, total DECIMAL(8,2), note VARCHAR(20))",
		Rows: [][]any{{"1", "10.50", "first"}, {"2", "3.25", nil}, {"3", "7.00", "new"}}}
	id := viewstest.Publish(t, src, orders, news)
	file := func(name, rows string) string {
		return writeWindow(t, src, id, "shop", "orders", name, rows).Paths[0]
	}
	files := []string{
		file("k1.parquet", `(2, '4.00', 'two', '[2]', 'u'), (3, '7.00', 'new', '[3]', 'd')`),
		file("k2.parquet", `(4, '1.00', 'four', '[4]', 'u'), (2, '5.00', 'two again', '[2]', 'u')`),
		file("k3.parquet", `(4, '1.00', 'four', '[4]', 'd'), (1, '0.50', 'one b', '[1]', 'u')`),
	}
	want := [][]string{
		{"1|10.5|first", "2|4|two"},
		{"1|10.5|first", "2|5|two again", "4|1|four"},
		{"1|0.5|one b", "2|5|two again"},
	}
	at := 0
	var staged [][]string
	var s *Session
	s = openSession(t, SessionOptions{Options: Options{SourceDir: src, Exact: true}, Sandbox: true,
		Tail: func(ctx context.Context, dir string) (*Tail, error) {
			cut := at
			tail := &Tail{Snapshot: id, Note: "cut: test", Pending: map[string]bool{"shop.orders": true, "crm.news": true},
				Windows: map[string]*Window{}, Files: map[string]string{}}
			tail.Stage = func(ctx context.Context, names []string) error {
				staged = append(staged, names)
				for _, n := range names {
					delete(tail.Pending, n)
					if n != "shop.orders" {
						continue // crm.news has no change: its window is empty, the snapshot's view
					}
					win := writeWindow(t, src, id, "shop", "orders", "scratch.parquet", `(9, '9.00', 'nine', '[9]', 'd')`)
					win.Paths = files[:cut+1]
					for i := range win.Paths {
						win.Spans = append(win.Spans, Span{Window: "w", File: files[i], From: uint64(10 * i), Upto: uint64(10*i + 10)})
					}
					tail.Windows[n] = win
				}
				return nil
			}
			return tail, nil
		}})
	ctx := context.Background()
	q := "SELECT id, total, note FROM shop.orders ORDER BY id"
	for at = range files {
		if at > 0 {
			staged = nil
			made := s.viewsMade
			if _, err := s.Reload(ctx); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(staged) != "[[shop.orders]]" {
				t.Fatalf("cut %d: the load staged %v, want shop.orders alone (read before)", at, staged)
			}
			if n := s.viewsMade - made; n != 0 {
				t.Fatalf("cut %d: the load made %d views again, want none (orders' reads its overlay, news' is a stand-in as before)", at, n)
			}
		}
		if got := queryLines(t, s, q); !slices.Equal(got, want[at]) {
			t.Fatalf("cut %d: %v, want %v", at, got, want[at])
		}
		if at > 0 && len(staged) != 1 {
			t.Fatalf("cut %d: the statement staged again: %v", at, staged)
		}
	}
	staged = nil
	queryLines(t, s, "SELECT count(*) FROM crm.news")
	if fmt.Sprint(staged) != "[[crm.news]]" {
		t.Fatalf("crm.news, never read before: staged %v, want it staged when named", staged)
	}
}
