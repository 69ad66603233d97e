package tail

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dbtrail/dbtrail/internal/binlogpos"
	"github.com/dbtrail/dbtrail/internal/change"
	"github.com/dbtrail/dbtrail/internal/moment"
	"github.com/dbtrail/dbtrail/internal/snapshot"
	"github.com/dbtrail/dbtrail/internal/when"
)

func TestDropped(t *testing.T) {
	m := snapshot.Manifest{Tables: []snapshot.ManifestTable{{Schema: "app", Table: "a"}, {Schema: "app", Table: "b"}, {Schema: "crm", Table: "c"}}}
	plan := moment.Plan{Tables: []moment.TablePlan{{Schema: "app", Table: "a"}, {Schema: "crm", Table: "c"}, {Schema: "app", Table: "new"}}}
	if got := dropped(m, plan); !slices.Equal(got, []string{"app.b"}) {
		t.Fatalf("dropped: %v, want app.b", got)
	}
	plan.Tables = append(plan.Tables, moment.TablePlan{Schema: "app", Table: "b"})
	if got := dropped(m, plan); len(got) != 0 {
		t.Fatalf("dropped: %v, want none", got)
	}
}

// TestStateNamesItsCut: every form of the cut line names the transaction
// or snapshot position the answer is at.
func TestStateNamesItsCut(t *testing.T) {
	pos := binlogpos.Position{File: "binlog.000003", Pos: 400, GTID: "0-1-7", Seq: 70}
	cut := moment.Cut{At: when.At{Kind: when.KindLatest}, Seq: 95, Landed: true,
		Txn: change.Txn{Position: binlogpos.Position{File: "binlog.000003", Pos: 900, GTID: "0-1-9"}, CommitTime: time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)}}
	for _, c := range []struct {
		st   State
		want []string
	}{
		{State{Snapshot: "S", Position: pos, Live: true, Cut: cut, Events: 25, Tables: 2}, []string{"GTID 0-1-9", "binlog.000003:900", "seq 95", "2026-12-02 08:00:00", "snapshot S + 25 events of 2 tables"}},
		{State{Snapshot: "S", Position: pos, Live: true, Cut: cut}, []string{"snapshot S", "binlog.000003:400", "GTID 0-1-7", "seq 70", "no change captured after it up to seq 95"}},
		{State{Snapshot: "S", Position: pos, Reason: "shape changed: x"}, []string{"snapshot S", "GTID 0-1-7", "seq 70", "left out: shape changed: x"}},
	} {
		got := c.st.String()
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q lacks %q", got, w)
			}
		}
		if seq := c.st.Seq(); (c.st.Live && seq != 95) || (!c.st.Live && seq != 70) {
			t.Errorf("%q: Seq %d", got, seq)
		}
	}
}
