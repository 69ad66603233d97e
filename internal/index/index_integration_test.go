package index

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/testsuite"
)

// Integration tests run against a real MariaDB started by testsuite; they fail
// (never skip) when it cannot start. One server serves all subtests of a test
// function; each subtest gets a database of its own.

func openStore(t testing.TB, srv *testsuite.Server, db string) *Store {
	t.Helper()
	ctx := context.Background()
	if err := srv.Exec(ctx, "DROP DATABASE IF EXISTS "+db, "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, srv.DSN(db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Init(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

var t0 = time.Now().UTC().Truncate(time.Hour).Add(17*time.Minute + 123456*time.Microsecond)

func ev(seq uint64, table, pk string, op change.Op, img string) change.Event {
	e := change.Event{Seq: seq, CommitTime: t0.Add(time.Duration(seq) * time.Microsecond), BinlogFile: "mariadb-bin.000003",
		EndPos: 1000 + seq, GTID: fmt.Sprintf("0-1-%d", seq), Schema: "shop", Table: table, Op: op, PK: key(pk), SchemaVersion: 1}
	if op != change.OpInsert {
		e.Before = []byte(`{"before":` + img + `}`)
	}
	if op != change.OpDelete {
		e.After = []byte(`{"after":` + img + `}`)
	}
	return e
}

// key is the canonical key text of a one-column key s.
func key(s string) string {
	b, _ := json.Marshal([]string{s})
	return string(b)
}

// unkey is the inverse of key.
func unkey(k string) string {
	var v []string
	if json.Unmarshal([]byte(k), &v) != nil || len(v) != 1 {
		return "?" + k
	}
	return v[0]
}

func commitEvents(t *testing.T, s *Store, source string, evs ...change.Event) {
	t.Helper()
	ctx := context.Background()
	tx, err := s.Begin(ctx, source, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.InsertEvents(ctx, evs); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

func TestStore(t *testing.T) {
	srv := testsuite.StartIndex(t)
	s := openStore(t, srv, "dbtrail_test")
	ctx := context.Background()

	t.Run("InitIdempotentAndRacing", func(t *testing.T) {
		if err := srv.Exec(ctx, "DROP DATABASE IF EXISTS dbtrail_race", "CREATE DATABASE dbtrail_race"); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				st, err := Open(ctx, srv.DSN("dbtrail_race"))
				if err != nil {
					errs[i] = err
					return
				}
				defer st.Close()
				errs[i] = st.Init(ctx)
			})
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		st, err := Open(ctx, srv.DSN("dbtrail_race"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.Init(ctx); err != nil {
			t.Fatalf("third Init: %v", err)
		}
		var n, maxV int
		if err := st.DB().QueryRowContext(ctx, "SELECT COUNT(*), MAX(version) FROM schema_migrations").Scan(&n, &maxV); err != nil {
			t.Fatal(err)
		}
		if n != len(migrations) || maxV != SchemaVersionLatest() {
			t.Fatalf("schema_migrations has %d rows up to %d, want %d", n, maxV, len(migrations))
		}
		// A newer index than this code knows is refused.
		if _, err := st.DB().ExecContext(ctx, "INSERT INTO schema_migrations VALUES (999, 'future', NOW(6))"); err != nil {
			t.Fatal(err)
		}
		if err := st.Init(ctx); err == nil || !strings.Contains(err.Error(), "newer") {
			t.Fatalf("Init on a newer index: %v", err)
		}
	})

	t.Run("MigrateEventsToChunks", func(t *testing.T) {
		// An index at schema version 3 (one row per event, hourly
		// partitions) with events in it; Init packs them, keeps the
		// partitions, and every reader sees the same events.
		if err := srv.Exec(ctx, "DROP DATABASE IF EXISTS dbtrail_v3", "CREATE DATABASE dbtrail_v3"); err != nil {
			t.Fatal(err)
		}
		db, err := srv.DB(ctx, "dbtrail_v3")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		now := time.Now()
		old := []string{migrationsDDL}
		for _, m := range migrations[:3] {
			old = append(old, m.stmts(now.Add(-2*time.Hour))...)
		}
		old = append(old, "INSERT INTO schema_migrations VALUES (1, 'a', NOW()), (2, 'b', NOW()), (3, 'c', NOW())",
			`ALTER TABLE events REORGANIZE PARTITION p_future INTO (PARTITION `+PartitionName(change.HourID(now))+
				` VALUES LESS THAN (`+fmt.Sprint(change.HourID(now)+1)+`), PARTITION p_future VALUES LESS THAN MAXVALUE)`)
		for _, q := range old {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		evs := []change.Event{ev(1, "t", "a", change.OpInsert, `"x"`), ev(2, "t", "a", change.OpUpdate, `"y"`), ev(3, "u", "b", change.OpDelete, `"z"`)}
		evs[1].PKBefore, evs[2].GTID = key("old"), ""
		for _, e := range evs {
			var before, after, pkb, gtid any
			if e.Before != nil {
				before = string(e.Before)
			}
			if e.After != nil {
				after = string(e.After)
			}
			if e.PKBefore != "" {
				pkb = e.PKBefore
			}
			if e.GTID != "" {
				gtid = e.GTID
			}
			if _, err := db.ExecContext(ctx, `INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				"src", e.Seq, e.CommitTime, change.HourID(e.CommitTime), e.BinlogFile, e.EndPos, gtid, e.Schema, e.Table,
				e.Op.String(), e.PK, pkb, e.SchemaVersion, before, after); err != nil {
				t.Fatal(err)
			}
		}
		st, err := Open(ctx, srv.DSN("dbtrail_v3"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.Init(ctx); err != nil {
			t.Fatal(err)
		}
		parts, err := st.Partitions(ctx)
		if err != nil || parts[1].Name != PartitionName(change.HourID(now)) {
			t.Fatalf("partitions after migration %+v %v", parts, err)
		}
		var got []change.Event
		for _, table := range []string{"t", "u"} {
			if err := st.WindowEvents(ctx, "src", "shop", table, 0, 10, func(e change.Event) error {
				got = append(got, e)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		var viewed []change.Event
		if err := st.TableChanges(ctx, "src", "shop", "t", 0, 10, func(e change.Event) error {
			viewed = append(viewed, e)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || len(viewed) != 2 {
			t.Fatalf("%d events by window, %d by view", len(got), len(viewed))
		}
		for i, e := range evs {
			g := got[i]
			if g.Seq != e.Seq || g.PK != e.PK || g.PKBefore != e.PKBefore || string(g.Before) != string(e.Before) ||
				string(g.After) != string(e.After) || g.GTID != e.GTID || !g.CommitTime.Equal(e.CommitTime) || g.EndPos != e.EndPos {
				t.Fatalf("event %d after migration\n got %+v\nwant %+v", i, g, e)
			}
			if i < 2 && (viewed[i].PKBefore != e.PKBefore || string(viewed[i].After) != string(e.After)) {
				t.Fatalf("view event %d: %+v", i, viewed[i])
			}
		}
		if err := st.Init(ctx); err != nil {
			t.Fatalf("second Init: %v", err)
		}
	})

	t.Run("SessionIsUTC", func(t *testing.T) {
		var tz, mode string
		if err := s.DB().QueryRowContext(ctx, "SELECT @@session.time_zone, @@session.sql_mode").Scan(&tz, &mode); err != nil {
			t.Fatal(err)
		}
		if tz != "+00:00" || strings.Contains(mode, "NO_BACKSLASH_ESCAPES") {
			t.Fatalf("session time_zone %q sql_mode %q", tz, mode)
		}
	})

	t.Run("EnsurePartitions", func(t *testing.T) {
		// The hour is taken before Init and again after it: Init reads the
		// clock in between, so its bound is one of the two (the same but
		// across an hour boundary).
		before := time.Now()
		st := openStore(t, srv, "dbtrail_parts")
		now := time.Now()
		parts, err := st.Partitions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if parts[0].Name != PartitionBefore || parts[len(parts)-1].Name != PartitionFuture {
			t.Fatalf("partitions %+v", parts)
		}
		if b := lastBound(parts); b != change.HourID(before)+DefaultAhead+1 && b != change.HourID(now)+DefaultAhead+1 {
			t.Fatalf("Init left bound %d, want %d (or %d, the hour after Init)", b, change.HourID(before)+DefaultAhead+1, change.HourID(now)+DefaultAhead+1)
		}
		// One event now, one 30 hours ahead (in p_future), one long ago (in p_before).
		e1, e2, e3 := ev(1, "t", "1", change.OpInsert, "1"), ev(2, "t", "2", change.OpInsert, "2"), ev(3, "t", "3", change.OpInsert, "3")
		e2.CommitTime = now.Add(30 * time.Hour)
		e3.CommitTime = now.Add(-30 * 24 * time.Hour)
		commitEvents(t, st, "src", e1, e2, e3)
		for range 2 { // the second call finds nothing to do
			if err := st.EnsurePartitions(ctx, now.Add(24*time.Hour), 12); err != nil {
				t.Fatal(err)
			}
		}
		parts, err = st.Partitions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := change.HourID(now.Add(24*time.Hour)) + 12
		if lastBound(parts) != want+1 {
			t.Fatalf("bound %d, want %d", lastBound(parts), want+1)
		}
		for i := 1; i < len(parts)-1; i++ {
			p := parts[i]
			if p.Name != PartitionName(p.Hour) || p.LessThan != p.Hour+1 || (i > 1 && p.Hour != parts[i-1].Hour+1) {
				t.Fatalf("partition %d: %+v after %+v", i, p, parts[i-1])
			}
		}
		if n, err := st.CountEvents(ctx, "src"); err != nil || n != 3 {
			t.Fatalf("events after split: %d %v", n, err)
		}
		var seq uint64
		q := fmt.Sprintf("SELECT first_seq FROM event_chunks PARTITION (%s)", PartitionName(change.HourID(e2.CommitTime)))
		if err := st.DB().QueryRowContext(ctx, q).Scan(&seq); err != nil || seq != 2 {
			t.Fatalf("event moved out of p_future: seq %d, %v", seq, err)
		}
		if err := st.DB().QueryRowContext(ctx, "SELECT first_seq FROM event_chunks PARTITION (p_before)").Scan(&seq); err != nil || seq != 3 {
			t.Fatalf("old event in p_before: seq %d, %v", seq, err)
		}
		// A reader holding the table's metadata lock makes the ALTER wait and
		// retry; it goes through once the reader is done.
		reader, err := st.DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := reader.QueryRowContext(ctx, "SELECT COUNT(*) FROM event_chunks").Scan(&seq); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- st.EnsurePartitions(ctx, now.Add(100*time.Hour), 0) }()
		waitForMetadataLock(t, ctx, st.DB(), done)
		reader.Commit()
		if err := <-done; err != nil {
			t.Fatalf("EnsurePartitions after the reader: %v", err)
		}
		if parts, _ := st.Partitions(ctx); lastBound(parts) != change.HourID(now.Add(100*time.Hour))+1 {
			t.Fatalf("bound after retry %d", lastBound(parts))
		}
	})

	t.Run("EventsAndCheckpointAtomic", func(t *testing.T) {
		cp := change.Checkpoint{BinlogFile: "mariadb-bin.000003", BinlogPos: 4242, GTID: "0-1-2", GTIDSet: "0-1-2",
			LastSeq: 2, LastCommit: t0.Add(2 * time.Microsecond)}
		write := func(commit bool) error {
			tx, err := s.Begin(ctx, "atomic", nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			if err := tx.InsertEvents(ctx, []change.Event{ev(1, "t", "1", change.OpInsert, "1"), ev(2, "t", "1", change.OpUpdate, "2")}); err != nil {
				return err
			}
			if err := tx.SaveCheckpoint(ctx, cp); err != nil {
				return err
			}
			if commit {
				return tx.Commit()
			}
			return tx.Rollback()
		}
		if err := write(false); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.CountEvents(ctx, "atomic"); n != 0 {
			t.Fatalf("rolled back events visible: %d", n)
		}
		if _, found, err := s.LoadCheckpoint(ctx, "atomic"); found || err != nil {
			t.Fatalf("rolled back checkpoint visible: %v %v", found, err)
		}
		saved := time.Now() // SaveCheckpoint sets UpdatedAt to the time of the save
		if err := write(true); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.CountEvents(ctx, "atomic"); n != 2 {
			t.Fatalf("committed events: %d", n)
		}
		got, found, err := s.LoadCheckpoint(ctx, "atomic")
		if err != nil || !found {
			t.Fatalf("checkpoint: %v %v", found, err)
		}
		if got.Source != "atomic" || got.BinlogFile != cp.BinlogFile || got.BinlogPos != cp.BinlogPos || got.GTID != cp.GTID ||
			got.GTIDSet != cp.GTIDSet || got.LastSeq != 2 || !got.LastCommit.Equal(cp.LastCommit) ||
			got.LastCommit.Location() != time.UTC || got.UpdatedAt.Before(saved.Truncate(time.Microsecond)) {
			t.Fatalf("checkpoint %+v, saved %+v", got, cp)
		}
		// Upsert: a second save replaces the row.
		tx, err := s.Begin(ctx, "atomic", nil)
		if err != nil {
			t.Fatal(err)
		}
		cp.LastSeq, cp.GTID = 9, ""
		if err := tx.SaveCheckpoint(ctx, cp); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := s.LoadCheckpoint(ctx, "atomic"); got.LastSeq != 9 || got.GTID != "" {
			t.Fatalf("checkpoint after upsert %+v", got)
		}
	})

	t.Run("DuplicateSeq", func(t *testing.T) {
		commitEvents(t, s, "dup", ev(1, "t", "1", change.OpInsert, "1"), ev(2, "t", "2", change.OpInsert, "2"))
		var many []change.Event // 32 go as a prepared statement
		for i := uint64(2); i < 42; i++ {
			many = append(many, ev(i, "t", "2", change.OpInsert, "2"))
		}
		for name, evs := range map[string][]change.Event{
			"stored":          {ev(2, "t", "2", change.OpInsert, "2")},
			"stored-prepared": many,
			"unordered":       {ev(5, "t", "5", change.OpInsert, "5"), ev(4, "t", "4", change.OpInsert, "4")},
		} {
			tx, err := s.Begin(ctx, "dup", nil)
			if err != nil {
				t.Fatal(err)
			}
			err = tx.InsertEvents(ctx, evs)
			tx.Rollback()
			if !errors.Is(err, ErrDuplicateSeq) || !strings.Contains(err.Error(), "insert events") {
				t.Fatalf("%s: %v", name, err)
			}
		}
		// After a checkpoint, a seq not after it is refused even in another hour.
		tx, _ := s.Begin(ctx, "dup", nil)
		if err := tx.SaveCheckpoint(ctx, change.Checkpoint{BinlogFile: "f", LastSeq: 2}); err != nil {
			t.Fatal(err)
		}
		tx.Commit()
		e := ev(1, "t", "1", change.OpInsert, "1")
		e.CommitTime = e.CommitTime.Add(2 * time.Hour)
		tx, _ = s.Begin(ctx, "dup", nil)
		err := tx.InsertEvents(ctx, []change.Event{e})
		tx.Rollback()
		if !errors.Is(err, ErrDuplicateSeq) {
			t.Fatalf("seq before checkpoint: %v", err)
		}
		if n, _ := s.CountEvents(ctx, "dup"); n != 2 {
			t.Fatalf("events %d", n)
		}
	})
}

// waitForMetadataLock returns once the server's process list shows an
// ALTER TABLE event_chunks waiting for the table's metadata lock (the
// reader holds it); it fails the test if done (the ALTER's caller) returns
// first, or if no such wait shows within a minute.
func waitForMetadataLock(t *testing.T, ctx context.Context, db *sql.DB, done <-chan error) {
	t.Helper()
	for range 600 {
		select {
		case err := <-done:
			t.Fatalf("EnsurePartitions did not wait for the reader: %v", err)
		default:
		}
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.PROCESSLIST
			WHERE STATE LIKE 'Waiting for table metadata lock%' AND INFO LIKE 'ALTER TABLE%event_chunks%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no ALTER TABLE event_chunks waited for the reader's metadata lock within a minute")
}
