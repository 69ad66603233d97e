package when

import (
	"errors"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
)

func TestParse(t *testing.T) {
	utc := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UTC()
	}
	for _, c := range []struct {
		in   string
		want At
	}{
		{"2026-11-29 08:00:00", At{Kind: KindTime, Time: utc("2026-11-29T08:00:00Z")}},
		{"2026-11-29T08:00:00Z", At{Kind: KindTime, Time: utc("2026-11-29T08:00:00Z")}},
		{"2026-11-29 08:00", At{Kind: KindTime, Time: utc("2026-11-29T08:00:00Z")}},
		{"2026-11-29", At{Kind: KindTime, Time: utc("2026-11-29T00:00:00Z")}},
		{"2026-11-29 08:00:00.123456", At{Kind: KindTime, Time: utc("2026-11-29T08:00:00.123456Z")}},
		{"2026-11-29T09:00:00+01:00", At{Kind: KindTime, Time: utc("2026-11-29T08:00:00Z")}},
		{"2026-11-29 09:00:00 +0100", At{Kind: KindTime, Time: utc("2026-11-29T08:00:00Z")}},
		{"2026-11-29 03:00:00-05", At{Kind: KindTime, Time: utc("2026-11-29T08:00:00Z")}},
		{"2026-11-29 09:00:00 Europe/Paris", At{Kind: KindTime, Time: utc("2026-11-29T08:00:00Z")}},
		{"2026-07-29 10:00:00 Europe/Paris", At{Kind: KindTime, Time: utc("2026-07-29T08:00:00Z")}},
		{"2026-11-29 08:00:00 UTC", At{Kind: KindTime, Time: utc("2026-11-29T08:00:00Z")}},
		{"time:2026-11-29 08:00:00", At{Kind: KindTime, Time: utc("2026-11-29T08:00:00Z")}},
		{"seq:81234", At{Kind: KindSeq, Seq: 81234}},
		{"81234", At{Kind: KindSeq, Seq: 81234}},
		{"binlog.000042:91234", At{Kind: KindPos, Pos: binlogpos.Position{File: "binlog.000042", Pos: 91234}}},
		{"pos:mysql-bin.000001:4", At{Kind: KindPos, Pos: binlogpos.Position{File: "mysql-bin.000001", Pos: 4}}},
		{"0-1-5123", At{Kind: KindGTID, GTID: "0-1-5123"}},
		{"gtid:2026-11-29", At{Kind: KindGTID, GTID: "2026-11-29"}},
		{"3E11FA47-71CA-11E1-9E33-C80AA9429562:23", At{Kind: KindGTID, GTID: "3E11FA47-71CA-11E1-9E33-C80AA9429562:23"}},
		{" latest ", At{Kind: KindLatest}},
	} {
		got, err := Parse(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got.Kind != c.want.Kind || !got.Time.Equal(c.want.Time) || got.Seq != c.want.Seq || got.Pos != c.want.Pos || got.GTID != c.want.GTID {
			t.Errorf("%q: got %+v, want %+v", c.in, got, c.want)
		}
		// String reads back to the same moment.
		again, err := Parse(got.String())
		if err != nil || again.Kind != got.Kind || !again.Time.Equal(got.Time) || again.Seq != got.Seq || again.Pos != got.Pos || again.GTID != got.GTID {
			t.Errorf("%q: String %q reads back as %+v, %v", c.in, got.String(), again, err)
		}
	}
	for _, bad := range []string{"", "yesterday", "2026-13-01", "2026-11-29 25:00", "2026-11-29 08:00:00 Mars/Olympus",
		"2026-11-29 08:00:00+25:00", "seq:abc", "seq:0", "0", "binlog:12", "gtid:x-y-z", "pos:binlog:4", "2026-11-29 08:00:00 junk more"} {
		_, err := Parse(bad)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%q: want a *ParseError, got %v", bad, err)
		}
	}
}
