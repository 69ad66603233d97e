package moment

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/when"
)

func pos(file string, p uint64) binlogpos.Position { return binlogpos.Position{File: file, Pos: p} }

var t0 = time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)

// facts: capture started at binlog.000001:4 (seq 0), a gap from
// binlog.000002:500 to binlog.000004:4 after seq 40, resumed there; the
// checkpoint is at seq 90, binlog.000005:900, last commit t0+90s.
func facts() Facts {
	return Facts{Source: "main", Captured: true,
		Checkpoint: change.Checkpoint{BinlogFile: "binlog.000005", BinlogPos: 900, LastSeq: 90, LastCommit: t0.Add(90 * time.Second), GTIDSet: "0-1-90"},
		Starts: []change.Start{
			{Seq: 0, Position: pos("binlog.000001", 4), Reason: "first start"},
			{Seq: 40, Position: pos("binlog.000004", 4), Reason: "restart past a capture gap"},
		},
		Gaps: []change.Gap{{ID: 1, FromFile: "binlog.000002", FromPos: 500, ToFile: "binlog.000004", ToPos: 4, Reason: "purged"}},
	}
}

func txn(seq uint64, file string, end uint64, ct time.Time) change.Txn {
	return change.Txn{Position: binlogpos.Position{File: file, Pos: end, GTID: "0-1-" + strconv.FormatUint(seq, 10), Seq: seq}, CommitTime: ct}
}

func refusedCode(t *testing.T, err error) Code {
	t.Helper()
	r, ok := IsRefused(err)
	if !ok {
		t.Fatalf("want a refusal, got %v", err)
	}
	return r.Code
}

func TestBounds(t *testing.T) {
	f := facts()
	mustAt := func(s string) when.At {
		a, err := when.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, c := range []struct {
		at        string
		floor     uint64
		code      Code // "" accepted
		reasonHas string
	}{
		{"2026-11-29 08:01:30", 0, "", ""},
		{"2026-11-29 08:01:31", 0, CodeNotCaptured, "may not be captured yet"},
		{"seq:90", 0, "", ""},
		{"seq:91", 0, CodeNotCaptured, "seq 90"},
		{"binlog.000005:900", 40, "", ""},
		{"binlog.000005:901", 0, CodeNotCaptured, "binlog.000005:900"},
		{"binlog.000003:10", 0, CodeGap, "capture gap #1"},
		{"binlog.000002:500", 0, "", ""},
		{"binlog.000004:4", 40, "", ""},
		{"gtid:0-1-5", 0, "", ""},
		{"latest", 0, "", ""},
	} {
		floor, upto, err := Bounds(mustAt(c.at), f)
		if c.code == "" {
			if err != nil || floor != c.floor || upto != 90 {
				t.Errorf("%s: floor %d upto %d err %v; want floor %d", c.at, floor, upto, err, c.floor)
			}
			continue
		}
		if got := refusedCode(t, err); got != c.code || !strings.Contains(err.Error(), c.reasonHas) {
			t.Errorf("%s: %v; want %s with %q", c.at, err, c.code, c.reasonHas)
		}
	}
	// Capture started after the position.
	g := f
	g.Starts = g.Starts[1:]
	if _, _, err := Bounds(mustAt("binlog.000001:100"), g); refusedCode(t, err) != CodeNotCovered {
		t.Fatalf("before capture start: %v", err)
	}
	if _, _, err := Bounds(mustAt("seq:1"), Facts{Source: "main"}); refusedCode(t, err) != CodeNotCaptured {
		t.Fatalf("no checkpoint: %v", err)
	}
}

func TestDecide(t *testing.T) {
	f := facts()
	at := func(s string) when.At {
		a, err := when.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	// A time whose cut is a transaction in the middle lands on it.
	x := txn(60, "binlog.000004", 3000, t0.Add(60*time.Second))
	c, err := Decide(at("2026-11-29 08:01:00.5"), false, f, 0, x, true)
	if err != nil || c.Seq != 60 || !c.Landed || c.Position().GTID != "0-1-60" || c.Position().Pos != 3000 {
		t.Fatalf("landed cut: %+v %v", c, err)
	}
	if !strings.Contains(c.String(), "0-1-60") || !strings.Contains(c.String(), "binlog.000004:3000") || !strings.Contains(c.String(), "2026-11-29 08:01:00") {
		t.Fatalf("String %q does not name the transaction", c.String())
	}
	// A time whose cut is the last transaction before the gap is refused;
	// a seq naming that same transaction is not.
	last := txn(40, "binlog.000002", 480, t0.Add(40*time.Second))
	if _, err := Decide(at("2026-11-29 08:00:45"), false, f, 0, last, true); refusedCode(t, err) != CodeGap {
		t.Fatalf("time in gap: %v", err)
	}
	if c, err := Decide(at("seq:40"), false, f, 0, last, true); err != nil || c.Seq != 40 {
		t.Fatalf("seq at the gap: %+v %v", c, err)
	}
	// Nothing at or before a time: refused; before a position: the start.
	if _, err := Decide(at("2026-11-28"), false, f, 0, change.Txn{}, false); refusedCode(t, err) != CodeNotCovered {
		t.Fatalf("time before everything: %v", err)
	}
	if c, err := Decide(at("binlog.000004:4"), false, f, 40, change.Txn{}, false); err != nil || c.Seq != 40 || c.Landed {
		t.Fatalf("position at the restart: %+v %v", c, err)
	}
	// A GTID nobody carries: past the set is "not captured yet".
	if _, err := Decide(at("0-1-95"), false, f, 0, change.Txn{}, false); refusedCode(t, err) != CodeNotCaptured {
		t.Fatalf("future GTID: %v", err)
	}
	if _, err := Decide(at("0-1-50"), false, f, 0, change.Txn{}, false); refusedCode(t, err) != CodeNotFound {
		t.Fatalf("GTID without events: %v", err)
	}
	if _, err := Decide(at("7-1-50"), false, f, 0, change.Txn{}, false); refusedCode(t, err) != CodeNotCaptured {
		t.Fatalf("GTID of an unknown domain: %v", err)
	}
	// before: the first transaction's predecessor is the floor.
	if c, err := Decide(at("seq:1"), true, f, 0, change.Txn{}, false); err != nil || c.Seq != 0 {
		t.Fatalf("before the first: %+v %v", c, err)
	}
}
