package moment

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/capture"
	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/index"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/when"
	"github.com/dbtrail/dbtrail/testsuite"
)

// TestMomentsAroundARealGap: capture is stopped, the source's binlogs are
// purged past its checkpoint, and capture resumes past the gap it records.
// A time whose cut would be the last transaction before the gap, and a
// binlog position inside it, are refused; the seq of that transaction and a
// time after the gap are not; a snapshot before the gap does not serve a
// moment after it; a range across the gap is refused.
func TestMomentsAroundARealGap(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	src := testsuite.StartSource(t)
	idx := testsuite.StartIndex(t)
	if err := idx.Exec(ctx, "CREATE DATABASE dbtrail"); err != nil {
		t.Fatal(err)
	}
	if err := src.Exec(ctx, "CREATE DATABASE app", "CREATE TABLE app.g (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	db, err := src.DB(ctx, "app")
	must(t, err)
	defer db.Close()
	store, err := index.Open(ctx, idx.DSN("dbtrail"))
	must(t, err)
	defer store.Close()
	must(t, store.Init(ctx))
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	run := func(cont bool) (stop func() error) {
		cctx, c := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- capture.Run(cctx, capture.Config{Source: "main", SourceDSN: src.DSN(""), Start: "earliest", ContinuePastGap: cont, Logger: logger}, store)
		}()
		return func() error { c(); return <-done }
	}
	caughtUp := func() {
		t.Helper()
		var file string
		var pos uint64
		var a, b any
		must(t, db.QueryRowContext(ctx, "SHOW MASTER STATUS").Scan(&file, &pos, &a, &b))
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if cp, ok, err := store.LoadCheckpoint(ctx, "main"); err == nil && ok {
				if c, err := binlogpos.Compare(cp.Pos().Coords(), binlogpos.Position{File: file, Pos: pos}); err == nil && c >= 0 {
					return
				}
			}
		}
		t.Fatalf("capture did not reach %s:%d", file, pos)
	}
	exec := func(qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}

	stop := run(false)
	exec("INSERT INTO g VALUES (1)")
	caughtUp()
	must(t, stop())
	next := time.Now().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(next) + 50*time.Millisecond)
	exec("INSERT INTO g VALUES (2)", "FLUSH BINARY LOGS", "INSERT INTO g VALUES (3)", "FLUSH BINARY LOGS")
	var newest string
	var pos uint64
	var a, b any
	must(t, db.QueryRowContext(ctx, "SHOW MASTER STATUS").Scan(&newest, &pos, &a, &b))
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		exec("PURGE BINARY LOGS TO '" + newest + "'")
		var oldest string
		var size any
		rows, err := db.QueryContext(ctx, "SHOW BINARY LOGS")
		must(t, err)
		cols, _ := rows.Columns()
		for rows.Next() {
			var name string
			dest := []any{&name, &size}
			for len(dest) < len(cols) {
				dest = append(dest, new(any))
			}
			must(t, rows.Scan(dest...))
			if oldest == "" {
				oldest = name
			}
		}
		rows.Close()
		if oldest == newest {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("binlogs before %s still listed", newest)
		}
	}
	stop = run(true) // records the gap and goes on from the oldest binlog
	next = time.Now().Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(next) + 50*time.Millisecond)
	exec("INSERT INTO g VALUES (4)")
	caughtUp()
	defer stop()

	f, err := ReadFacts(ctx, store, "main")
	must(t, err)
	if len(f.Gaps) != 1 || len(f.Starts) != 2 {
		t.Fatalf("facts: %d gaps, %d starts", len(f.Gaps), len(f.Starts))
	}
	g := f.Gaps[0]
	one, err := store.KeyChanges(ctx, "main", "app", "g", "[1]")
	must(t, err)
	four, err := store.KeyChanges(ctx, "main", "app", "g", "[4]")
	must(t, err)
	if len(one) != 1 || len(four) != 1 {
		t.Fatalf("events of 1: %d, of 4: %d", len(one), len(four))
	}
	resolve := func(text string, before bool) (Cut, error) {
		at, err := when.Parse(text)
		must(t, err)
		return Resolve(ctx, store, f, at, before)
	}
	// Inside the gap, by time and by position: refused.
	inGap := one[0].CommitTime.Add(500 * time.Millisecond).Format("2006-01-02 15:04:05.000")
	if _, err := resolve(inGap, false); !isCode(err, CodeGap) {
		t.Fatalf("a time in the gap: %v", err)
	}
	if _, err := resolve(fmt.Sprintf("%s:%d", g.FromFile, g.FromPos+1), false); !isCode(err, CodeGap) {
		t.Fatalf("a position in the gap: %v", err)
	}
	// The last transaction before it, by seq, and a time after it: cut.
	c, err := resolve(fmt.Sprintf("seq:%d", one[0].Seq), false)
	if err != nil || c.Seq != one[0].Seq {
		t.Fatalf("seq before the gap: %+v %v", c, err)
	}
	after := four[0].CommitTime.Format("2006-01-02 15:04:05")
	c, err = resolve(after, false)
	if err != nil || c.Seq != four[0].Seq {
		t.Fatalf("a time after the gap: %+v %v", c, err)
	}
	// A snapshot from before the gap does not serve a moment after it.
	before := snapshot.Manifest{SnapshotID: "20261129T080000Z", Position: binlogpos.Position{File: g.FromFile, Pos: g.FromPos, Seq: one[0].Seq}}
	if _, err := ChooseBase(c, []snapshot.Manifest{before}, f.Gaps, f.Starts); !isCode(err, CodeGap) {
		t.Fatalf("base across the gap: %v", err)
	}
	// A range across the gap is refused.
	from, _ := when.Parse(fmt.Sprintf("seq:%d", one[0].Seq))
	until, _ := when.Parse("latest")
	if _, err := ResolveRange(ctx, store, f, from, until); !isCode(err, CodeGap) {
		t.Fatalf("range across the gap: %v", err)
	}
}

func isCode(err error, code Code) bool {
	r, ok := IsRefused(err)
	return ok && r.Code == code
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The index store is a moment.Store.
var _ Store = (*index.Store)(nil)
