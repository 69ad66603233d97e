package change

import (
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
)

func TestPositions(t *testing.T) {
	e := Event{Seq: 7, BinlogFile: "bin.000002", EndPos: 900, GTID: "0-1-5"}
	if got, want := e.Pos(), (binlogpos.Position{File: "bin.000002", Pos: 900, GTID: "0-1-5", Seq: 7}); got != want {
		t.Errorf("Event.Pos() = %+v, want %+v", got, want)
	}
	cp := Checkpoint{BinlogFile: "bin.000003", BinlogPos: 4, GTID: "0-1-9", LastSeq: 12}
	if got, want := cp.Pos(), (binlogpos.Position{File: "bin.000003", Pos: 4, GTID: "0-1-9", Seq: 12}); got != want {
		t.Errorf("Checkpoint.Pos() = %+v, want %+v", got, want)
	}
	v := SchemaVersion{BinlogFile: "bin.000001", BinlogPos: 300, Seq: 2}
	if got, want := v.Pos(), (binlogpos.Position{File: "bin.000001", Pos: 300, Seq: 2}); got != want {
		t.Errorf("SchemaVersion.Pos() = %+v, want %+v", got, want)
	}
	g := Gap{FromFile: "bin.000001", FromPos: 10, FromGTID: "0-1-1", ToFile: "bin.000004", ToPos: 4}
	if got, want := g.From(), (binlogpos.Position{File: "bin.000001", Pos: 10, GTID: "0-1-1"}); got != want {
		t.Errorf("Gap.From() = %+v, want %+v", got, want)
	}
	if got, want := g.To(), (binlogpos.Position{File: "bin.000004", Pos: 4}); got != want {
		t.Errorf("Gap.To() = %+v, want %+v", got, want)
	}
}

func TestHours(t *testing.T) {
	at := time.Date(2026, 12, 2, 7, 59, 59, 999, time.UTC)
	h := HourID(at)
	if got, want := HourTime(h), time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("HourTime(HourID(%s)) = %s, want %s", at, got, want)
	}
	if HourID(at.Add(time.Nanosecond*1e9)) != h+1 {
		t.Errorf("the next second is not in the next hour")
	}
}

func TestGTIDKey(t *testing.T) {
	for _, c := range []struct {
		gtid, domain string
		n            uint64
		bad          bool
	}{
		{gtid: "0-1-42", domain: "0", n: 42},
		{gtid: "3E11FA47-71CA-11E1-9E33-C80AA9429562:23", domain: "3e11fa47-71ca-11e1-9e33-c80aa9429562", n: 23},
		{gtid: "3e11fa47-71ca-11e1-9e33-c80aa9429562:tag:5", domain: "3e11fa47-71ca-11e1-9e33-c80aa9429562:tag", n: 5},
		{gtid: "0-1", bad: true},
		{gtid: ":5", bad: true},
		{gtid: "a-1-2", bad: true},
	} {
		d, n, err := GTIDKey(c.gtid)
		if c.bad {
			if err == nil {
				t.Errorf("GTIDKey(%q) = %q, %d; want an error", c.gtid, d, n)
			}
			continue
		}
		if err != nil || d != c.domain || n != c.n {
			t.Errorf("GTIDKey(%q) = %q, %d, %v; want %q, %d", c.gtid, d, n, err, c.domain, c.n)
		}
	}
}
