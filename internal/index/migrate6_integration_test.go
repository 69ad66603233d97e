package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/testsuite"
)

// migratedTo creates database name with the first n migrations applied, as
// an older dbtrail left it, and returns a pool on it.
func migratedTo(t *testing.T, srv *testsuite.Server, name string, n int, now time.Time) *sql.DB {
	t.Helper()
	ctx := context.Background()
	if err := srv.Exec(ctx, "DROP DATABASE IF EXISTS "+name, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	db, err := srv.DB(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, migrationsDDL); err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:n] {
		if m.stmts != nil {
			for _, q := range m.stmts(now) {
				if _, err := conn.ExecContext(ctx, q); err != nil {
					t.Fatalf("migration %d: %v", m.version, err)
				}
			}
		}
		if m.run != nil {
			if err := m.run(ctx, conn, now); err != nil {
				t.Fatalf("migration %d: %v", m.version, err)
			}
		}
		if _, err := conn.ExecContext(ctx, "INSERT INTO schema_migrations VALUES (?, ?, NOW())", m.version, m.name); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// insertOlderChunks stores evs as the index stored them before migration 6
// (no column_names): runs of one table's consecutive events, images as
// objects, commit times as text.
func insertOlderChunks(t *testing.T, db *sql.DB, source string, evs []change.Event) {
	t.Helper()
	for i := 0; i < len(evs); {
		j := i + 1
		for j < len(evs) && evs[j].Table == evs[i].Table && evs[j].Seq == evs[j-1].Seq+1 &&
			change.HourID(evs[j].CommitTime) == change.HourID(evs[i].CommitTime) {
			j++
		}
		head := &evs[i]
		var b strings.Builder
		b.WriteByte('[')
		for k := i; k < j; k++ {
			e := &evs[k]
			if k > i {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"s":%d`, e.Seq)
			if !e.CommitTime.Equal(head.CommitTime) {
				fmt.Fprintf(&b, `,"t":"%s"`, e.CommitTime.UTC().Format(datetimeLayout))
			}
			if e.GTID != head.GTID {
				g, _ := json.Marshal(e.GTID)
				fmt.Fprintf(&b, `,"g":%s`, g)
			}
			if e.EndPos != head.EndPos {
				fmt.Fprintf(&b, `,"e":%d`, e.EndPos)
			}
			fmt.Fprintf(&b, `,"o":"%c","k":%s`, e.Op, e.PK)
			if e.PKBefore != "" {
				fmt.Fprintf(&b, `,"kb":%s`, e.PKBefore)
			}
			if e.Before != nil {
				fmt.Fprintf(&b, `,"b":%s`, e.Before)
			}
			if e.After != nil {
				fmt.Fprintf(&b, `,"a":%s`, e.After)
			}
			b.WriteByte('}')
		}
		b.WriteByte(']')
		_, err := db.Exec(`INSERT INTO event_chunks (source, first_seq, last_seq, hour_id, commit_ts, binlog_file, end_pos,
			gtid, schema_name, table_name, schema_version, n, events) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			source, head.Seq, evs[j-1].Seq, change.HourID(head.CommitTime), head.CommitTime.UTC(), head.BinlogFile, head.EndPos,
			nullString(head.GTID), head.Schema, head.Table, head.SchemaVersion, j-i, []byte(b.String()))
		if err != nil {
			t.Fatalf("insert an older chunk at seq %d: %v", head.Seq, err)
		}
		i = j
	}
}

// interleaved is a stream of transactions that switch table at every
// statement, as OLTP traffic does: three tables of different columns.
func interleaved(first uint64, n int) []change.Event {
	var out []change.Event
	t := time.Date(2026, 11, 30, 9, 59, 58, 0, time.UTC)
	end := uint64(4000)
	for i := range n {
		seq := first + uint64(i)
		if i%5 == 0 {
			t = t.Add(300 * time.Millisecond)
			end += 500
		}
		table := []string{"orders", "stock", "customer"}[i%3]
		img := fmt.Sprintf(`{"id":%d,"%s_note":"n%d \"q\" é","v":%d}`, seq%7, table, seq, seq)
		op := []change.Op{change.OpInsert, change.OpUpdate, change.OpUpdate, change.OpDelete}[i%4]
		e := change.Event{Seq: seq, CommitTime: t, BinlogFile: "mariadb-bin.000007", EndPos: end,
			GTID: fmt.Sprintf("0-1-%d", 100+i/5), Schema: "shop", Table: table, Op: op, PK: fmt.Sprintf("[%d]", seq%7), SchemaVersion: 1}
		if op != change.OpInsert {
			e.Before = []byte(img)
		}
		if op != change.OpDelete {
			e.After = []byte(strings.Replace(img, `"v":`, `"v":1`, 1))
		}
		out = append(out, e)
	}
	return out
}

// TestMigration6ReadsBothForms: an index at version 5 holding chunks in the
// older form is migrated; then interleaved traffic is stored in the new
// form, and every reader (windows, counts, events by seq, transaction
// lookups, seq runs, the events view) gives back exactly the events stored,
// across both forms.
func TestMigration6ReadsBothForms(t *testing.T) {
	srv := testsuite.StartIndex(t)
	ctx := context.Background()
	now := time.Now()
	db := migratedTo(t, srv, "dbtrail_v5", 5, now)
	evs := interleaved(100001, 400) // past chunkMaxSpan: reads look back a bounded span
	insertOlderChunks(t, db, "main", evs[:150])
	s, err := Open(ctx, srv.DSN("dbtrail_v5"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.EnsurePartitions(ctx, evs[0].CommitTime, DefaultAhead); err != nil {
		t.Fatal(err)
	}
	if err := s.Init(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 150; i < len(evs); i += 97 {
		commitEvents(t, s, "main", evs[i:min(i+97, len(evs))]...)
	}
	var newRows, newEvents int
	if err := s.DB().QueryRowContext(ctx, `SELECT COUNT(*), SUM(n) FROM event_chunks WHERE column_names IS NOT NULL`).
		Scan(&newRows, &newEvents); err != nil || newEvents != 250 || newRows > 12 {
		t.Fatalf("new form: %d events in %d chunks (%v); want 250 in at most 12 (packed per table and batch)", newEvents, newRows, err)
	}
	checkReaders(t, s, "main", evs)
}

// checkReaders checks every reader of the index against evs, all of source.
func checkReaders(t *testing.T, s *Store, source string, evs []change.Event) {
	t.Helper()
	ctx := context.Background()
	bySeq := map[uint64]change.Event{}
	for _, e := range evs {
		bySeq[e.Seq] = e
	}
	first, last := evs[0].Seq, evs[len(evs)-1].Seq
	if n, err := s.CountEvents(ctx, source); err != nil || n != int64(len(evs)) {
		t.Fatalf("count %d %v", n, err)
	}
	runs, err := s.SeqRuns(ctx, source)
	if err != nil || !reflect.DeepEqual(runs, []SeqRun{{first, last}}) {
		t.Fatalf("seq runs %v %v", runs, err)
	}
	for _, w := range [][2]uint64{{0, last}, {first + 3, last - 7}, {first + 139, first + 159}, {first + 150, first + 151}, {first + 199, first + 209}} {
		want := map[[2]string]int64{}
		for _, e := range evs {
			if e.Seq > w[0] && e.Seq <= w[1] {
				want[[2]string{e.Schema, e.Table}]++
			}
		}
		counts, err := s.ChangeCounts(ctx, source, w[0], w[1])
		if err != nil || !reflect.DeepEqual(counts, want) {
			t.Fatalf("change counts %v: %v %v, want %v", w, counts, err, want)
		}
		for _, table := range []string{"orders", "stock", "customer"} {
			var got []change.Event
			if err := s.WindowEvents(ctx, source, "shop", table, w[0], w[1], func(e change.Event) error {
				e.Before, e.After = cloneBytes(e.Before), cloneBytes(e.After)
				got = append(got, e)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			var want []change.Event
			for _, e := range evs {
				if e.Table == table && e.Seq > w[0] && e.Seq <= w[1] {
					want = append(want, e)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("window %v of %s: %d events, want %d\n got %+v\nwant %+v", w, table, len(got), len(want), got, want)
			}
		}
	}
	for _, e := range evs {
		got, ok, err := s.EventAt(ctx, source, e.Seq)
		if err != nil || !ok || !reflect.DeepEqual(got, e) {
			t.Fatalf("event %d: %+v %v %v", e.Seq, got, ok, err)
		}
		if e.Seq%7 != 0 {
			continue
		}
		// The transaction of e ends at its end position and is named by its
		// last event; lookups by position, time, GTID and seq agree.
		lastOfTxn := e.Seq
		for bySeq[lastOfTxn+1].EndPos == e.EndPos && lastOfTxn < last {
			lastOfTxn++
		}
		pos := txnOf(&e).Position.Coords()
		for name, lookup := range map[string]func() (change.Txn, bool, error){
			"position": func() (change.Txn, bool, error) { return s.TxnAtPos(ctx, source, pos, 0, last) },
			"gtid":     func() (change.Txn, bool, error) { return s.TxnOfGTID(ctx, source, e.GTID, 0, last) },
			"seq":      func() (change.Txn, bool, error) { return s.TxnOfSeq(ctx, source, e.Seq, 0, last) },
			"time":     func() (change.Txn, bool, error) { return s.TxnAtTime(ctx, source, e.CommitTime, 0, last) },
		} {
			txn, ok, err := lookup()
			if err != nil || !ok || txn.Position.Seq != lastOfTxn {
				t.Fatalf("%s lookup of seq %d: %+v %v %v, want seq %d", name, e.Seq, txn, ok, err, lastOfTxn)
			}
		}
	}
	// The events view: the same events, images as the objects stored,
	// byte for byte.
	rows, err := s.DB().QueryContext(ctx, `SELECT `+eventCols+` FROM events WHERE source = ? ORDER BY seq`, source)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var e change.Event
		if err := scanEvent(rows, &e); err != nil {
			t.Fatal(err)
		}
		want := bySeq[e.Seq]
		if !e.CommitTime.Equal(want.CommitTime) || e.EndPos != want.EndPos || e.GTID != want.GTID || e.Op != want.Op ||
			e.Table != want.Table || (e.Before == nil) != (want.Before == nil) || string(e.Before) != string(want.Before) ||
			(e.After == nil) != (want.After == nil) || string(e.After) != string(want.After) {
			t.Fatalf("events view seq %d:\n got %+v\nwant %+v", e.Seq, e, want)
		}
		n++
	}
	if err := rows.Err(); err != nil || n != len(evs) {
		t.Fatalf("events view: %d rows of %d (%v)", n, len(evs), err)
	}
}
