package index

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/change"
)

func TestAppendDatetimeText(t *testing.T) {
	loc := time.FixedZone("x", 5*3600)
	for _, c := range []struct {
		t    time.Time
		want string
	}{
		{time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC), `2026-01-02 03:04:05.123456`},
		{time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), `1970-01-01 00:00:00.000000`},
		{time.Date(2026, 12, 31, 23, 59, 59, 999999000, time.UTC), `2026-12-31 23:59:59.999999`},
		{time.Date(2026, 6, 1, 2, 0, 0, 1000, loc), `2026-05-31 21:00:00.000001`},
	} {
		if got := string(appendDatetimeText(nil, c.t)); got != c.want {
			t.Errorf("appendDatetimeText(%v) = %s, want %s", c.t, got, c.want)
		}
	}
}

func TestHourAndPartitionName(t *testing.T) {
	tm := time.Date(2026, 3, 4, 17, 59, 59, 999, time.UTC)
	h := change.HourID(tm)
	if h != uint32(tm.Unix()/3600) {
		t.Fatalf("HourID = %d", h)
	}
	if change.HourID(tm.Truncate(time.Hour).Add(time.Hour)) != h+1 || change.HourID(tm.Truncate(time.Hour)) != h {
		t.Fatalf("next hour not h+1")
	}
	if got := PartitionName(h); got != "p2026030417" {
		t.Fatalf("PartitionName = %s", got)
	}
	if !change.HourTime(h).Equal(time.Date(2026, 3, 4, 17, 0, 0, 0, time.UTC)) {
		t.Fatalf("HourTime = %v", change.HourTime(h))
	}
	// A zone other than UTC names the same hour.
	if change.HourID(tm.In(time.FixedZone("y", -7*3600))) != h {
		t.Fatalf("HourID depends on zone")
	}
	if lb := lastBound([]Partition{{Name: PartitionBefore, LessThan: 10}, {Name: "p", Hour: 10, LessThan: 11}, {Name: PartitionFuture}}); lb != 11 {
		t.Fatalf("lastBound = %d", lb)
	}
}

func TestRedactDSN(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"u:secret@tcp(127.0.0.1:3306)/db?parseTime=true", "u:xxxxx@tcp(127.0.0.1:3306)/db?parseTime=true"},
		{"u@tcp(h:1)/db", "u@tcp(h:1)/db"},
		{"u:p@ss@w0rd@unix(/tmp/s)/db", "u:xxxxx@unix(/tmp/s)/db"},
		{"u:secret@bogus-dsn", "u:xxxxx@bogus-dsn"},
	} {
		got := RedactDSN(c.in)
		if got != c.want {
			t.Errorf("RedactDSN(%q) = %q, want %q", c.in, got, c.want)
		}
		if strings.Contains(got, "secret") || strings.Contains(got, "w0rd") {
			t.Errorf("RedactDSN(%q) leaks the password: %q", c.in, got)
		}
	}
}

func TestStoreConfigForcesSession(t *testing.T) {
	cfg, err := storeConfig("u:p@tcp(127.0.0.1:1)/db?time_zone=%27SYSTEM%27&sql_mode=%27ANSI_QUOTES%27&parseTime=false&loc=Local")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Params["time_zone"] != "'+00:00'" || cfg.Loc != time.UTC || !cfg.ParseTime {
		t.Fatalf("time settings not forced: %v %v %v", cfg.Params, cfg.Loc, cfg.ParseTime)
	}
	if cfg.Params["sql_mode"] != "'"+sessionSQLMode+"'" || strings.Contains(sessionSQLMode, "BACKSLASH") {
		t.Fatalf("sql_mode not forced: %v", cfg.Params)
	}
	if _, err := storeConfig("u:secret@tcp(127.0.0.1:1)/db?loc=Nowhere/Zone"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("bad dsn error = %v", err)
	}
}

func TestLeaseName(t *testing.T) {
	if n := leaseName("src1"); n != "dbtrail.capture.src1" {
		t.Fatalf("leaseName = %s", n)
	}
	long := strings.Repeat("s", 64)
	n := leaseName(long)
	if len(n) > 64 || n == leaseName(long[:63]+"t") {
		t.Fatalf("long lease name %q", n)
	}
}

func testEvent(seq uint64, op change.Op, img string) change.Event {
	e := change.Event{Seq: seq, CommitTime: time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC), BinlogFile: "bin.000001",
		EndPos: 100 + seq, GTID: "0-1-" + string(rune('0'+seq%10)), Schema: "db", Table: "t", Op: op, PK: "[1]", SchemaVersion: 1}
	if op != change.OpInsert {
		e.Before = []byte(img)
	}
	if op != change.OpDelete {
		e.After = []byte(img)
	}
	return e
}

func TestCheckEvent(t *testing.T) {
	good := []change.Event{testEvent(1, change.OpInsert, "{}"), testEvent(2, change.OpUpdate, "{}"), testEvent(3, change.OpDelete, "{}")}
	for _, e := range good {
		if err := checkEvent(&e); err != nil {
			t.Errorf("checkEvent(%c): %v", e.Op, err)
		}
	}
	bad := []func(e *change.Event){
		func(e *change.Event) { e.Op = 'x' },
		func(e *change.Event) { e.Before = []byte("{}") }, // insert with before
		func(e *change.Event) { e.After = nil },           // insert without after
		func(e *change.Event) { e.CommitTime = time.Time{} },
		func(e *change.Event) { e.PK = "1" },                 // not a JSON array
		func(e *change.Event) { e.PKBefore = `{"a":1}` },     // not a JSON array
		func(e *change.Event) { e.After = []byte(`"x"`) },    // not a JSON object
		func(e *change.Event) { e.After = []byte(`{"a":1`) }, // not a JSON object
	}
	for i, f := range bad {
		e := testEvent(1, change.OpInsert, "{}")
		f(&e)
		if err := checkEvent(&e); err == nil {
			t.Errorf("bad event %d accepted", i)
		}
	}
}

func TestNextStmtAndArgs(t *testing.T) {
	cs := make([]chunk, 40)
	for i := range cs {
		e := testEvent(uint64(i+1), change.OpInsert, "{}")
		cs[i] = chunk{head: &e, firstSeq: e.Seq, lastSeq: e.Seq, n: 1, payload: make([]byte, 100<<10)}
	}
	var plan []int
	for i := 0; i < len(cs); {
		n := nextStmt(cs[i:], 4<<20)
		plan = append(plan, n)
		i += n
	}
	if got := fmt.Sprint(plan); got != "[16 16 4 4]" {
		t.Fatalf("plan %s", got)
	}
	if n := nextStmt(cs, 1<<10); n != 1 {
		t.Fatalf("a chunk over the limit goes alone, got %d", n)
	}
	if n := nextStmt(cs, 700<<10); n != 4 {
		t.Fatalf("byte-limited statement of %d chunks", n)
	}
	if ph := insertPlaceholders(2); ph != insertChunksHead+"(?,?,?,?,?,?,?,?,?,?,?,?,?,?),(?,?,?,?,?,?,?,?,?,?,?,?,?,?)" {
		t.Fatalf("placeholders %s", ph)
	}
	args := appendChunkArgs(nil, "s", &cs[1])
	if len(args) != chunkCols || args[1] != uint64(2) || args[7] != "0-1-2" || args[11] != uint64(1) {
		t.Fatalf("args %v", args)
	}
	cs[1].head.GTID = ""
	if args := appendChunkArgs(nil, "s", &cs[1]); args[7] != nil {
		t.Fatalf("empty gtid sent as %v", args[7])
	}
}
