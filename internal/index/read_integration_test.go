package index

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/schema"
	"github.com/dbtrail/dbtrail/testsuite"
)

func TestStoreReads(t *testing.T) {
	srv := testsuite.StartIndex(t)
	s := openStore(t, srv, "dbtrail_test")
	ctx := context.Background()

	t.Run("ImagesRoundTrip", func(t *testing.T) {
		// Batch sizes of one chunk of 1 and 7 events, and of 3000 events in
		// chunks of up to 1000 (chunkMaxEvents): 1000+1000+1000 rows, one
		// statement of 3 = 1+1+1 on the prepared ladder.
		seq := uint64(0)
		for _, size := range []int{1, 7, 3000} {
			var evs []change.Event
			for i := 0; i < size; i++ {
				seq++
				e := ev(seq, "t", fmt.Sprintf("k'\\\x00\xff%d", seq), change.OpUpdate, `"q'uote \\ back\nslash \u0000 é😀"`)
				e.Before = []byte(`{"a":"tab\tnl\n'\"\\\u0000\u001a😀 }]"}`)
				switch seq % 4 {
				case 0:
					e.After = []byte(`{}`)
				case 1:
					e.GTID = ""
				case 2:
					e.Op, e.Before = change.OpInsert, nil
				}
				evs = append(evs, e)
			}
			commitEvents(t, s, "img", evs...)
			var got []change.Event
			if err := s.TableChanges(ctx, "img", "shop", "t", seq-uint64(size), seq, func(e change.Event) error {
				got = append(got, e)
				return nil
			}); err != nil || len(got) != size {
				t.Fatalf("size %d: %d changes, %v", size, len(got), err)
			}
			sort.Slice(got, func(i, j int) bool { return got[i].Seq < got[j].Seq })
			for i, g := range got {
				e := evs[i]
				if g.PK != e.PK || string(g.Before) != string(e.Before) || (g.Before == nil) != (e.Before == nil) ||
					string(g.After) != string(e.After) || (g.After == nil) != (e.After == nil) || g.GTID != e.GTID ||
					!g.CommitTime.Equal(e.CommitTime) || g.CommitTime.Location() != time.UTC || g.Op != e.Op ||
					g.EndPos != e.EndPos || g.BinlogFile != e.BinlogFile || g.SchemaVersion != 1 || g.Seq != e.Seq {
					t.Fatalf("size %d: round trip\n got %+v\nwant %+v", size, g, e)
				}
			}
		}
		for _, size := range []int{1, 40} {
			tx, _ := s.Begin(ctx, "img", nil)
			var evs []change.Event
			for i := 0; i < size; i++ {
				evs = append(evs, ev(uint64(1000+i), "t", "x", change.OpInsert, "1"))
			}
			evs[0].After = []byte("{\"a\":\"\xff\xfe not utf-8\"}")
			err := tx.InsertEvents(ctx, evs)
			tx.Rollback()
			if err == nil {
				t.Fatalf("size %d: invalid UTF-8 image stored", size)
			}
		}
		// Capture's sessions send text as binary; the server still checks
		// what goes into text columns.
		tx, _ := s.Begin(ctx, "img", nil)
		bad := ev(2000, "t\xff", "x", change.OpInsert, "1")
		if err := tx.InsertEvents(ctx, []change.Event{bad}); err == nil {
			t.Fatal("a table name that is not UTF-8 was stored")
		}
		tx.Rollback()
	})

	t.Run("TableChangesAndKeyChanges", func(t *testing.T) {
		evs := []change.Event{
			ev(1, "t", "b", change.OpInsert, "1"), ev(2, "t", "a", change.OpInsert, "2"), ev(3, "u", "a", change.OpInsert, "3"),
			ev(4, "t", "b", change.OpUpdate, "4"), ev(5, "t", "a", change.OpDelete, "5"), ev(6, "t", "c", change.OpInsert, "6"),
			ev(7, "t", "b", change.OpUpdate, "7"),
		}
		commitEvents(t, s, "tc", evs...)
		commitEvents(t, s, "other", ev(4, "t", "a", change.OpInsert, "x"))
		var got []string
		err := s.TableChanges(ctx, "tc", "shop", "t", 1, 6, func(e change.Event) error {
			got = append(got, fmt.Sprintf("%s%d%c", unkey(e.PK), e.Seq, e.Op))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != "a2i a5d b4u c6i" {
			t.Fatalf("window (1,6]: %v", got)
		}
		stop := errors.New("stop")
		if err := s.TableChanges(ctx, "tc", "shop", "t", 0, 100, func(change.Event) error { return stop }); err != stop {
			t.Fatalf("callback error returned as %v", err)
		}
		got = nil
		if err := s.WindowEvents(ctx, "tc", "shop", "t", 1, 6, func(e change.Event) error {
			got = append(got, fmt.Sprintf("%s%d%c", unkey(e.PK), e.Seq, e.Op))
			return nil
		}); err != nil || strings.Join(got, " ") != "a2i b4u a5d c6i" {
			t.Fatalf("window events (1,6] in seq order: %v %v", got, err)
		}
		if err := s.WindowEvents(ctx, "tc", "shop", "t", 0, 100, func(change.Event) error { return stop }); err != stop {
			t.Fatalf("callback error returned as %v", err)
		}
		counts, err := s.ChangeCounts(ctx, "tc", 1, 6)
		if err != nil || len(counts) != 2 || counts[[2]string{"shop", "t"}] != 4 || counts[[2]string{"shop", "u"}] != 1 {
			t.Fatalf("change counts (1,6]: %v %v", counts, err)
		}
		kc, err := s.KeyChanges(ctx, "tc", "shop", "t", key("b"))
		if err != nil || len(kc) != 3 || kc[0].Seq != 1 || kc[1].Seq != 4 || kc[2].Seq != 7 || kc[0].Before != nil ||
			string(kc[2].After) != `{"after":7}` {
			t.Fatalf("key changes of b: %+v %v", kc, err)
		}
		if kc, err := s.KeyChanges(ctx, "tc", "shop", "t", key("zz")); err != nil || len(kc) != 0 {
			t.Fatalf("key changes of zz: %+v %v", kc, err)
		}
	})

	t.Run("SetEndPos", func(t *testing.T) {
		// 1 is a complete transaction; 2..4 a streamed one, inserted before
		// its end was known, in two calls; 5 the next open one.
		tx, _ := s.Begin(ctx, "end", nil)
		defer tx.Rollback()
		var evs []change.Event
		for i := uint64(1); i <= 5; i++ {
			e := ev(i, "t", fmt.Sprint(i), change.OpInsert, "1")
			if i > 1 {
				e.EndPos = 0
			}
			evs = append(evs, e)
		}
		for _, part := range [][]change.Event{evs[:3], evs[3:4], evs[4:]} {
			if err := tx.InsertEvents(ctx, part); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.SetEndPos(ctx, 2, 4, "mariadb-bin.000004", 777); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, read := range []func(uint64, uint64, func(change.Event) error) error{
			func(a, b uint64, fn func(change.Event) error) error {
				return s.TableChanges(ctx, "end", "shop", "t", a, b, fn)
			},
			func(a, b uint64, fn func(change.Event) error) error {
				return s.WindowEvents(ctx, "end", "shop", "t", a, b, fn)
			},
		} {
			got = got[:0]
			if err := read(0, 10, func(e change.Event) error {
				got = append(got, fmt.Sprintf("%d:%s:%d", e.Seq, e.BinlogFile, e.EndPos))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			want := "1:mariadb-bin.000003:1001 2:mariadb-bin.000004:777 3:mariadb-bin.000004:777 4:mariadb-bin.000004:777 5:mariadb-bin.000003:0"
			if strings.Join(got, " ") != want {
				t.Fatalf("end positions %v", got)
			}
		}
		// A range that splits a chunk of unknown end positions is refused.
		tx, _ = s.Begin(ctx, "end2", nil)
		defer tx.Rollback()
		for i := range evs {
			evs[i].EndPos = 0
		}
		if err := tx.InsertEvents(ctx, evs); err != nil {
			t.Fatal(err)
		}
		if err := tx.SetEndPos(ctx, 2, 4, "mariadb-bin.000004", 777); err == nil {
			t.Fatal("a range inside a chunk was accepted")
		}
		tx.Rollback()
		// The same, stored by an earlier index transaction: checked by query.
		commitEvents(t, s, "end3", evs...)
		tx, _ = s.Begin(ctx, "end3", nil)
		defer tx.Rollback()
		if err := tx.SetEndPos(ctx, 2, 4, "mariadb-bin.000004", 777); err == nil {
			t.Fatal("a range inside a stored chunk was accepted")
		}
		if err := tx.SetEndPos(ctx, 1, 5, "mariadb-bin.000004", 777); err != nil {
			t.Fatalf("the whole stored chunk: %v", err)
		}
	})

	t.Run("SchemaHistory", func(t *testing.T) {
		def := &schema.Table{Schema: "shop", Name: "t", KeyKind: schema.KeyPrimary, Key: []string{"id"},
			Columns: []schema.Column{{Name: "id", Type: "bigint", Unsigned: true}, {Name: "e", Type: "enum", Elems: []string{"a", "b"}, Nullable: true}}}
		def2 := def.Clone()
		def2.Columns = append(def2.Columns, schema.Column{Name: "x", Type: "varchar", Length: 10, Charset: "utf8mb4"})
		vs := []change.SchemaVersion{
			{Schema: "shop", Table: "t", Version: 1, Seq: 0, BinlogFile: "f", BinlogPos: 4, DDL: "CREATE TABLE t ...", Definition: def},
			{Schema: "shop", Table: "a", Version: 1, Seq: 0, BinlogFile: "f", BinlogPos: 4, DDL: "CREATE TABLE a ...", Definition: def},
			{Schema: "shop", Table: "t", Version: 2, Seq: 10, BinlogFile: "f", BinlogPos: 900, DDL: "ALTER TABLE t ADD x", Definition: def2},
			{Source: "sch", Schema: "shop", Table: "a", Version: 2, Seq: 12, BinlogFile: "f", BinlogPos: 950, DDL: "DROP TABLE a"},
		}
		tx, _ := s.Begin(ctx, "sch", nil)
		for _, v := range vs {
			if err := tx.PutSchemaVersion(ctx, v); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		tx, _ = s.Begin(ctx, "sch", nil)
		if err := tx.PutSchemaVersion(ctx, vs[0]); err == nil {
			t.Fatal("version stored twice")
		}
		if err := tx.PutSchemaVersion(ctx, change.SchemaVersion{Source: "x", Schema: "s", Table: "t", Version: 1}); err == nil {
			t.Fatal("foreign source accepted")
		}
		tx.Rollback()
		hist, err := s.SchemaHistory(ctx, "sch")
		if err != nil || len(hist) != 4 {
			t.Fatalf("history %+v %v", hist, err)
		}
		order := []string{}
		for _, h := range hist {
			order = append(order, fmt.Sprintf("%s%d", h.Table, h.Version))
		}
		if strings.Join(order, " ") != "a1 t1 t2 a2" {
			t.Fatalf("history order %v", order)
		}
		if h := hist[2]; h.Source != "sch" || h.DDL != vs[2].DDL || h.BinlogPos != 900 || h.Seq != 10 ||
			len(h.Definition.Columns) != 3 || h.Definition.Columns[1].Elems[1] != "b" || !h.Definition.Columns[0].Unsigned ||
			h.CreatedAt.IsZero() {
			t.Fatalf("t2 round trip %+v", h)
		}
		latest, err := s.LatestSchemas(ctx, "sch")
		if err != nil || len(latest) != 2 || latest[0].Table != "a" || latest[0].Version != 2 || latest[0].Definition != nil ||
			latest[1].Table != "t" || latest[1].Version != 2 {
			t.Fatalf("latest %+v %v", latest, err)
		}
	})

	t.Run("Gaps", func(t *testing.T) {
		g := change.Gap{Source: "gap", FromFile: "f.000001", FromPos: 4, FromGTID: "0-1-5", ToFile: "f.000003", ToPos: 4,
			Reason: "binlog f.000001 purged", DetectedAt: t0}
		id1, err := s.RecordGap(ctx, g)
		if err != nil {
			t.Fatal(err)
		}
		g.FromGTID, g.DetectedAt = "", time.Time{}
		id2, err := s.RecordGap(ctx, g)
		if err != nil || id2 <= id1 {
			t.Fatalf("ids %d %d %v", id1, id2, err)
		}
		gaps, err := s.Gaps(ctx, "gap")
		if err != nil || len(gaps) != 2 {
			t.Fatalf("gaps %+v %v", gaps, err)
		}
		if g0 := gaps[0]; g0.ID != id1 || g0.FromGTID != "0-1-5" || !g0.DetectedAt.Equal(t0) || g0.Reason != g.Reason ||
			g0.ToFile != "f.000003" || gaps[1].FromGTID != "" || gaps[1].DetectedAt.IsZero() {
			t.Fatalf("gaps %+v", gaps)
		}
		if none, err := s.Gaps(ctx, "nogap"); err != nil || len(none) != 0 {
			t.Fatalf("gaps of another source %+v %v", none, err)
		}
	})
}

// TestSeqAtAcrossChunks maps positions to seqs over 3000 events packed in
// chunks of several sizes and tables (more than one page of chunks), the
// transactions 3 events each, ending at position 100*tx.
func TestSeqAtAcrossChunks(t *testing.T) {
	srv := testsuite.StartIndex(t)
	s := openStore(t, srv, "dbtrail_seqat")
	ctx := context.Background()
	const n = 3000
	tx, err := s.Begin(ctx, "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.RecordStart(ctx, change.Start{Seq: 0, Position: binlogpos.Position{File: "mariadb-bin.000003", Pos: 4}, Reason: "first start", StartedAt: t0}); err != nil {
		t.Fatal(err)
	}
	for from := uint64(1); from <= n; {
		var evs []change.Event
		for k := 0; k < 1+int(from%97) && from <= n; k++ {
			e := ev(from, []string{"a", "b"}[from/250%2], fmt.Sprint(from), change.OpInsert, "1")
			e.EndPos = 100 * ((from + 2) / 3)
			evs = append(evs, e)
			from++
		}
		if err := tx.InsertEvents(ctx, evs); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.SaveCheckpoint(ctx, change.Checkpoint{BinlogFile: "mariadb-bin.000003", BinlogPos: 100 * n / 3, LastSeq: n}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var chunks int
	if err := s.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM event_chunks WHERE source = 'p'").Scan(&chunks); err != nil || chunks < 40 {
		t.Fatalf("%d chunks (%v): the test wants more than two pages", chunks, err)
	}
	for _, c := range []struct{ pos, want uint64 }{
		{100 * n / 3, n}, {100*n/3 - 1, n - 3}, {150, 3}, {100, 3}, {99, 0}, {5000, 150}, {5099, 150},
	} {
		got, err := s.SeqAt(ctx, "p", binlogpos.Position{File: "mariadb-bin.000003", Pos: c.pos})
		if err != nil || got != c.want {
			t.Errorf("SeqAt(%d) = %d, %v; want %d", c.pos, got, err, c.want)
		}
	}
}
