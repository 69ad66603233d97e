package fold

import (
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
	"github.com/dbtrail/dbtrail/internal/dumpconv"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/views"
)

// modelTable is a table, its rows by key (canonical images) and how to make
// a random row of a key.
type modelTable struct {
	def  *schema.Table
	rows map[string][]byte
	gen  func(r *rand.Rand, id int) []byte
}

func parseTable(t *testing.T, ddl, name string) *schema.Table {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.sql"), []byte(ddl), 0o644); err != nil {
		t.Fatal(err)
	}
	def, _, err := dumpconv.Definition(os.DirFS(dir), "db", name, "s.sql")
	if err != nil {
		t.Fatal(err)
	}
	return def
}

func jsonStr(s string) string { return fmt.Sprintf("%q", s) }

func maybeNull(r *rand.Rand, v string) string {
	if r.IntN(5) == 0 {
		return "null"
	}
	return v
}

func intTable(t *testing.T) *modelTable {
	def := parseTable(t, "CREATE TABLE `nums` (`id` bigint NOT NULL, `name` varchar(20) DEFAULT NULL, `v` int DEFAULT NULL, PRIMARY KEY (`id`));", "nums")
	return &modelTable{def: def, rows: map[string][]byte{}, gen: func(r *rand.Rand, id int) []byte {
		return fmt.Appendf(nil, `{"id":%d,"name":%s,"v":%s}`, id,
			maybeNull(r, jsonStr(fmt.Sprintf("n%d-%d", id, r.IntN(1000)))), maybeNull(r, fmt.Sprint(r.IntN(1<<20)-1<<19)))
	}}
}

func compositeTable(t *testing.T) *modelTable {
	def := parseTable(t, "CREATE TABLE `pairs` (`a` varchar(10) NOT NULL, `b` int NOT NULL, `note` text, PRIMARY KEY (`a`,`b`));", "pairs")
	return &modelTable{def: def, rows: map[string][]byte{}, gen: func(r *rand.Rand, id int) []byte {
		return fmt.Appendf(nil, `{"a":%s,"b":%d,"note":%s}`, jsonStr(fmt.Sprintf("k%d", id%7)), id/7,
			maybeNull(r, jsonStr(strings.Repeat("x", r.IntN(30)))))
	}}
}

func (m *modelTable) key(t *testing.T, img []byte) string {
	k, err := rowimage.KeyFromImage(m.def, img)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// window makes n random events against the model and applies them.
func (m *modelTable) window(t *testing.T, r *rand.Rand, n int, nextID *int, seq *uint64) []change.Event {
	var evs []change.Event
	keys := func() []string {
		ks := make([]string, 0, len(m.rows))
		for k := range m.rows {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	var deleted [][]byte
	for range n {
		*seq++
		ev := change.Event{Seq: *seq, Schema: m.def.Schema, Table: m.def.Name}
		ks := keys()
		switch op := r.IntN(10); {
		case op < 3 || len(ks) == 0:
			*nextID++
			img := m.gen(r, *nextID)
			if len(deleted) > 0 && r.IntN(2) == 0 { // re-insert a deleted key
				img, deleted = deleted[0], deleted[1:]
			}
			k := m.key(t, img)
			if _, ok := m.rows[k]; ok {
				continue
			}
			ev.Op, ev.PK, ev.After = change.OpInsert, k, img
			m.rows[k] = img
		case op < 6:
			k := ks[r.IntN(len(ks))]
			old := m.rows[k]
			id := int(r.Int64N(1 << 40))
			img := m.gen(r, id)
			// Keep the key: take the key columns from the old image.
			img = withKeyOf(t, m, old, img)
			ev.Op, ev.PK, ev.Before, ev.After = change.OpUpdate, k, old, img
			m.rows[k] = img
		case op < 8:
			k := ks[r.IntN(len(ks))]
			old := m.rows[k]
			*nextID++
			img := m.gen(r, *nextID)
			nk := m.key(t, img)
			if _, ok := m.rows[nk]; ok {
				continue
			}
			ev.Op, ev.PK, ev.PKBefore, ev.Before, ev.After = change.OpUpdate, nk, k, old, img
			delete(m.rows, k)
			m.rows[nk] = img
		default:
			k := ks[r.IntN(len(ks))]
			ev.Op, ev.PK, ev.Before = change.OpDelete, k, m.rows[k]
			deleted = append(deleted, m.rows[k])
			delete(m.rows, k)
		}
		evs = append(evs, ev)
	}
	return evs
}

// withKeyOf returns img with its key columns' values taken from old.
func withKeyOf(t *testing.T, m *modelTable, old, img []byte) []byte {
	of, err := rowimage.DecodeImage(old)
	if err != nil {
		t.Fatal(err)
	}
	nf, err := rowimage.DecodeImage(img)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range nf {
		if i > 0 {
			b.WriteByte(',')
		}
		raw := f.Raw
		if slices.Contains(m.def.Key, f.Name) {
			raw = of[i].Raw
		}
		fmt.Fprintf(&b, "%q:%s", f.Name, raw)
	}
	b.WriteByte('}')
	return []byte(b.String())
}

// chainEntry is one entry of a table's chain in the test's store folder.
type chainEntry struct{ name, posdel, upserts string }

// tableState is a table file and its chain.
type tableState struct {
	file  string
	chain []chainEntry
}

func writeFile(t *testing.T, path string, write func(io.Writer) error) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(f); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// startChain writes a table file of the model's rows and an empty pair.
func startChain(t *testing.T, store string, m *modelTable, gen int) tableState {
	st := tableState{file: filepath.Join(store, fmt.Sprintf("%s.g%d.parquet", m.def.Name, gen))}
	m.writeTable(t, st.file)
	st.chain = []chainEntry{emptyPair(t, store, m, gen)}
	return st
}

// writeTable writes the model's rows, in key order, as a table file.
func (m *modelTable) writeTable(t *testing.T, path string) snapshot.WriteResult {
	t.Helper()
	var res snapshot.WriteResult
	writeFile(t, path, func(w io.Writer) error {
		tw, err := snapshot.NewTableWriter(w, m.def, snapshot.FooterMeta{}, snapshot.WriterOptions{})
		if err != nil {
			return err
		}
		for _, k := range sortedKeys(m.rows) {
			if err := tw.AppendImage(m.rows[k]); err != nil {
				return err
			}
		}
		res, err = tw.Close()
		return err
	})
	return res
}

func emptyPair(t *testing.T, store string, m *modelTable, gen int) chainEntry {
	e := chainEntry{name: "000000",
		posdel:  filepath.Join(store, fmt.Sprintf("%s.g%d.000000.posdel", m.def.Name, gen)),
		upserts: filepath.Join(store, fmt.Sprintf("%s.g%d.000000.upserts", m.def.Name, gen))}
	writeFile(t, e.posdel, func(w io.Writer) error {
		pw, err := snapshot.NewPosdelWriter(w)
		if err != nil {
			return err
		}
		_, err = pw.Close()
		return err
	})
	writeFile(t, e.upserts, func(w io.Writer) error {
		uw, err := snapshot.NewUpsertsWriter(w, m.def, snapshot.FooterMeta{}, snapshot.WriterOptions{})
		if err != nil {
			return err
		}
		_, err = uw.Close()
		return err
	})
	return e
}

func sortedKeys(m map[string][]byte) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// checkViews lays st out as <src>/current and compares the DuckDB view of
// the table with the model.
func checkViews(t *testing.T, db *sql.DB, m *modelTable, st tableState, step string) {
	t.Helper()
	src := t.TempDir()
	layout(t, filepath.Join(src, "current", m.def.Schema), m, st)
	var b strings.Builder
	if err := views.Generate(&b, src, []views.TableRef{{Schema: m.def.Schema, Table: m.def.Name, Columns: m.def.ColumnNames()}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(b.String()); err != nil {
		t.Fatal(err)
	}
	compareModel(t, db, m, step)
}

// checkTailViews lays st out as snapshot tailSnapshot of a source folder
// and compares the live tail's view of the table (views.WriteTail: st's
// table file and chain with w applied after it) with the model, which
// already holds w's changes. paths, when given, are the window's files in
// place of w's one (a tail cache's segments of the same events).
func checkTailViews(t *testing.T, db *sql.DB, m *modelTable, st tableState, w *Window, step string, paths ...string) {
	t.Helper()
	const tailSnapshot = "20261129T000000Z"
	if len(paths) == 0 {
		paths = []string{w.File.Path}
	}
	src := t.TempDir()
	layout(t, filepath.Join(src, snapshot.SnapshotsDir, tailSnapshot, m.def.Schema), m, st)
	tail := &views.Tail{Snapshot: tailSnapshot, Windows: map[string]*views.Window{
		m.def.QualifiedName(): {Paths: paths, KeyCol: w.File.KeyCol, OpCol: w.File.OpCol, Events: w.Events,
			KeyMatch: func(left, right string) string { return KeyMatch(w.Table, left, right) }},
	}}
	var b strings.Builder
	ref := views.TableRef{Schema: m.def.Schema, Table: m.def.Name, Columns: m.def.ColumnNames()}
	if err := views.WriteTail(&b, views.Options{SourceDir: src, Raw: true}, []views.TableRef{ref}, tail); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(b.String()); err != nil {
		t.Fatalf("%s: %v\n%s", step, err, b.String())
	}
	compareModel(t, db, m, step)
}

// layout links st's table file and chain into dir as a snapshot names
// them.
func layout(t *testing.T, dir string, m *modelTable, st tableState) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	link := func(from, name string) {
		if err := os.Link(from, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	link(st.file, m.def.Name+".parquet")
	for _, e := range st.chain {
		link(e.posdel, m.def.Name+"."+e.name+".posdel")
		link(e.upserts, m.def.Name+"."+e.name+".upserts")
	}
}

// compareModel compares the view of m's table with the model's rows.
func compareModel(t *testing.T, db *sql.DB, m *modelTable, step string) {
	t.Helper()
	got := queryJSON(t, db, m)
	var want []string
	for _, k := range sortedKeys(m.rows) {
		want = append(want, normJSON(t, m.rows[k]))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: %s through the views has %d rows, the model %d\nfirst differences:\n%s", step, m.def.Name, len(got), len(want), diff(got, want))
	}
}

// queryJSON reads the view as one JSON object per row, sorted.
func queryJSON(t *testing.T, db *sql.DB, m *modelTable) []string {
	t.Helper()
	rows, err := db.Query(fmt.Sprintf(`SELECT to_json(dbtrail_row)::VARCHAR FROM "%s"."%s" dbtrail_row`, m.def.Schema, m.def.Name))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// normJSON spells an image as DuckDB's to_json does (no spaces).
func normJSON(t *testing.T, img []byte) string {
	fs, err := rowimage.DecodeImage(img)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", f.Name, f.Raw)
	}
	b.WriteByte('}')
	return b.String()
}

func diff(got, want []string) string {
	var out []string
	g := map[string]bool{}
	for _, s := range got {
		g[s] = true
	}
	w := map[string]bool{}
	for _, s := range want {
		w[s] = true
	}
	for _, s := range got {
		if !w[s] && len(out) < 5 {
			out = append(out, "  extra   "+s)
		}
	}
	for _, s := range want {
		if !g[s] && len(out) < 10 {
			out = append(out, "  missing "+s)
		}
	}
	return strings.Join(out, "\n")
}

// eventsOf yields evs in order, as an index window read does.
func eventsOf(evs []change.Event) Events {
	return func(fn func(change.Event) error) error {
		for _, ev := range evs {
			if err := fn(ev); err != nil {
				return err
			}
		}
		return nil
	}
}
