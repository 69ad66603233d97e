package spaceneed_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/dumpconv"
	"github.com/dbtrail/dbtrail/internal/fold"
	"github.com/dbtrail/dbtrail/internal/rowimage"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/spaceneed"
	"github.com/dbtrail/dbtrail/internal/sqlexport"
)

// The target of every estimate: actual ÷ estimate within it.
const lowest, highest = 0.4, 1.0

// estTable is a table of the test: its DDL and a random row of a key.
type estTable struct {
	name, ddl string
	row       func(r *rand.Rand, id int) string
	// scale multiplies the rows and changes of the test: a narrow table
	// needs more to write files above spaceneed.Floor.
	scale int
}

func estTables() []estTable {
	text := func(r *rand.Rand, n int) string {
		words := []string{"order", "shipped", "customer", "paid", "refund", "warehouse", "note", "the", "and", "of", "express"}
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		return fmt.Sprintf("%q", b.String())
	}
	return []estTable{
		{name: "wide", ddl: "CREATE TABLE `wide` (`id` bigint NOT NULL, `title` varchar(200) DEFAULT NULL, `body` text, PRIMARY KEY (`id`));",
			row: func(r *rand.Rand, id int) string {
				return fmt.Sprintf(`{"id":%d,"title":%s,"body":%s}`, id, text(r, 60+r.IntN(100)), text(r, 300+r.IntN(700)))
			}},
		{name: "ints", ddl: "CREATE TABLE `ints` (`id` bigint NOT NULL, `a` int DEFAULT NULL, `b` bigint DEFAULT NULL, `c` smallint DEFAULT NULL, PRIMARY KEY (`id`));",
			row: func(r *rand.Rand, id int) string {
				return fmt.Sprintf(`{"id":%d,"a":%d,"b":%d,"c":%d}`, id, r.IntN(1<<20), r.Int64N(1<<40), r.IntN(100))
			}, scale: 10},
		// One value in every row (a dictionary makes it tiny in the table
		// file; the plain forms hold it whole).
		{name: "repeated", ddl: "CREATE TABLE `repeated` (`id` bigint NOT NULL, `v` varchar(300) DEFAULT NULL, PRIMARY KEY (`id`));",
			row: func(r *rand.Rand, id int) string {
				return fmt.Sprintf(`{"id":%d,"v":"%s"}`, id, strings.Repeat("x", 250))
			}, scale: 20},
		{name: "blobs", ddl: "CREATE TABLE `blobs` (`id` bigint NOT NULL, `kind` int DEFAULT NULL, `data` blob, PRIMARY KEY (`id`));",
			row: func(r *rand.Rand, id int) string {
				b := make([]byte, 500+r.IntN(1500))
				for i := range b {
					b[i] = byte(r.Uint32())
				}
				return fmt.Sprintf(`{"id":%d,"kind":%d,"data":%q}`, id, r.IntN(5), base64.StdEncoding.EncodeToString(b))
			}},
	}
}

// model is a table's rows by key, with its definition.
type model struct {
	def    *schema.Table
	create string
	rows   map[string][]byte
	keys   []string
	next   int
	seq    uint64
	gen    func(r *rand.Rand, id int) string
}

func newModel(t *testing.T, tb estTable) *model {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "s.sql"), []byte(tb.ddl), 0o644))
	def, create, err := dumpconv.Definition(os.DirFS(dir), "db", tb.name, "s.sql")
	must(t, err)
	return &model{def: def, create: create, rows: map[string][]byte{}, gen: tb.row}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (m *model) put(t *testing.T, img []byte) string {
	k, err := rowimage.KeyFromImage(m.def, img)
	must(t, err)
	if _, ok := m.rows[k]; !ok {
		m.keys = append(m.keys, k)
	}
	m.rows[k] = img
	return k
}

// window makes n changes, as an OLTP load does: updates of existing rows
// (most), inserts, deletes.
func (m *model) window(t *testing.T, r *rand.Rand, n int) []change.Event {
	var evs []change.Event
	for range n {
		m.seq++
		ev := change.Event{Seq: m.seq, Schema: m.def.Schema, Table: m.def.Name}
		switch op := r.IntN(20); {
		case op < 4 || len(m.keys) == 0:
			m.next++
			img := []byte(m.gen(r, m.next))
			ev.Op, ev.After = change.OpInsert, img
			ev.PK = m.put(t, img)
		case op < 18:
			k := m.keys[r.IntN(len(m.keys))]
			if m.rows[k] == nil {
				continue
			}
			id := m.idOf(t, k)
			img := []byte(m.gen(r, id))
			ev.Op, ev.PK, ev.Before, ev.After = change.OpUpdate, k, m.rows[k], img
			m.rows[k] = img
		default:
			k := m.keys[r.IntN(len(m.keys))]
			if m.rows[k] == nil {
				continue
			}
			ev.Op, ev.PK, ev.Before = change.OpDelete, k, m.rows[k]
			m.rows[k] = nil
		}
		evs = append(evs, ev)
	}
	return evs
}

func (m *model) idOf(t *testing.T, k string) int {
	var id int
	_, err := fmt.Sscanf(strings.Trim(k, `[]"`), "%d", &id)
	must(t, err)
	return id
}

func writeFile(t *testing.T, path string, write func(io.Writer) error) uint64 {
	t.Helper()
	f, err := os.Create(path)
	must(t, err)
	must(t, write(f))
	must(t, f.Close())
	st, err := os.Stat(path)
	must(t, err)
	return uint64(st.Size())
}

func size(t *testing.T, paths ...string) uint64 {
	var n uint64
	for _, p := range paths {
		st, err := os.Stat(p)
		must(t, err)
		n += uint64(st.Size())
	}
	return n
}

// within fails t when actual ÷ estimate is outside the target.
func within(t *testing.T, step string, actual uint64, e spaceneed.Estimate) {
	t.Helper()
	r := spaceneed.Ratio(actual, e.Bytes)
	t.Logf("%s: wrote %d, estimate %d, ratio %.2f", step, actual, e.Bytes, r)
	if !e.Sure || r < lowest || r > highest {
		t.Errorf("%s: wrote %d bytes for an estimate of %d (sure %v): ratio %.2f, want %.1f to %.1f", step, actual, e.Bytes, e.Sure, r, lowest, highest)
	}
}

// TestEstimates: each estimate against the files the real writers write
// (snapshot's table writer, the fold engine's pair and rewrite, a
// restore's scratch writer, the .sql export), for a table with wide text,
// one with only integers and one with blobs, under windows of OLTP
// changes: actual ÷ estimate is between 0.4 and 1.
func TestEstimates(t *testing.T) {
	ctx := context.Background()
	eng, err := fold.Open(ctx, fold.Options{TempDir: t.TempDir(), MemoryLimit: "256MB", KeyMapDir: t.TempDir()})
	must(t, err)
	defer eng.Close()
	for _, tb := range estTables() {
		rows, changes := 4000*max(tb.scale, 1), 1500*max(tb.scale, 1)
		t.Run(tb.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(36, uint64(len(tb.name))))
			m := newModel(t, tb)
			for range rows {
				m.next++
				m.put(t, []byte(m.gen(r, m.next)))
			}
			dir := t.TempDir()
			meta := snapshot.FooterMeta{CreateTable: m.create, SnapshotID: "20261206T000000Z", Source: "main"}
			file := filepath.Join(dir, "t.parquet")
			writeFile(t, file, func(w io.Writer) error { return writeRows(m, w, meta, snapshot.WriterOptions{}) })
			tbl := measure(t, file)
			var posdel, upserts []string
			for i := range 3 {
				evs := m.window(t, r, changes)
				win, err := eng.WriteWindow(m.def, fmt.Sprintf("w%d", i), func(fn func(change.Event) error) error {
					for _, ev := range evs {
						if err := fn(ev); err != nil {
							return err
						}
					}
					return nil
				})
				must(t, err)
				pd, up := filepath.Join(dir, fmt.Sprintf("t.%d.posdel", i)), filepath.Join(dir, fmt.Sprintf("t.%d.upserts", i))
				est := spaceneed.Pair(tbl, int64(len(evs)))
				pf, err := os.Create(pd)
				must(t, err)
				uf, err := os.Create(up)
				must(t, err)
				_, err = eng.WritePair(ctx, win, fold.TableFile{Path: file}, meta, pf, uf, nil)
				must(t, err)
				must(t, pf.Close())
				must(t, uf.Close())
				win.Remove()
				basis := "table file"
				if tbl.PairRows > 0 {
					basis = "pairs"
				}
				within(t, fmt.Sprintf("pair %d (from the %s)", i, basis), size(t, pd, up), est)
				n, err := snapshot.FileRows(up)
				must(t, err)
				posdel, upserts = append(posdel, pd), append(upserts, up)
				tbl.Chain += size(t, pd, up)
				tbl.PairBytes += size(t, pd, up)
				tbl.PairRows += n
				dels, err := snapshot.FileRows(pd)
				must(t, err)
				tbl.PosdelRows += dels
			}

			// A rewrite of the table file, its chain and one more window.
			evs := m.window(t, r, changes)
			win, err := eng.WriteWindow(m.def, "wr", func(fn func(change.Event) error) error {
				for _, ev := range evs {
					if err := fn(ev); err != nil {
						return err
					}
				}
				return nil
			})
			must(t, err)
			defer win.Remove()
			in := fold.RewriteInput{Table: m.def, TableFile: file, Posdel: posdel, Window: win, Meta: meta}
			for _, u := range upserts {
				in.Upserts = append(in.Upserts, fold.Upserts(u))
			}
			rewritten := filepath.Join(dir, "t.rewritten.parquet")
			written := writeFile(t, rewritten, func(w io.Writer) error {
				_, err := eng.Rewrite(ctx, in, w, nil)
				return err
			})
			within(t, "rewrite", written, spaceneed.Rewrite(tbl, int64(len(evs))))
			within(t, "export (parquet)", written, spaceneed.Export(tbl, int64(len(evs)), false))

			// A restore's staged table and a .sql export, from the
			// rewritten table (what they read once it is rebuilt).
			after := measure(t, rewritten)
			staged := writeFile(t, filepath.Join(dir, "t.staged.parquet"), func(w io.Writer) error {
				return writeRows(m, w, meta, snapshot.WriterOptions{Scratch: true})
			})
			within(t, "restore staging", staged, spaceneed.Staging(after, 0))
			text := writeFile(t, filepath.Join(dir, "t.sql"), func(w io.Writer) error {
				_, err := sqlexport.Files(w, []string{"estimate test"}, []string{rewritten}, sqlexport.Options{})
				return err
			})
			within(t, "sql text", text, spaceneed.Text(after))
		})
	}
}

// measure is what MeasureTable knows of the table file at path alone.
func measure(t *testing.T, path string) spaceneed.Table {
	st, err := snapshot.ReadFileStats(path)
	must(t, err)
	return spaceneed.Table{File: size(t, path), Rows: st.Rows, Plain: uint64(st.Plain), PlainBinary: uint64(st.PlainBinary)}
}

// liveKeys are the model's keys with a row, in insertion order.
func (m *model) liveKeys() []string {
	var ks []string
	for _, k := range m.keys {
		if m.rows[k] != nil {
			ks = append(ks, k)
		}
	}
	return ks
}

// writeRows writes the model's live rows as a table file with opts.
func writeRows(m *model, w io.Writer, meta snapshot.FooterMeta, opts snapshot.WriterOptions) error {
	tw, err := snapshot.NewTableWriter(w, m.def, meta, opts)
	if err != nil {
		return err
	}
	for _, k := range m.liveKeys() {
		if err := tw.AppendImage(m.rows[k]); err != nil {
			return err
		}
	}
	_, err = tw.Close()
	return err
}
